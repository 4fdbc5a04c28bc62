#include "extender/cluster/dra_pod_ask.h"

#include <set>

namespace topofit::cluster {
namespace {

// The claim's requests, first fit each, over `free` minus what earlier requests took; only GPUs whose
// value is `value` when the claim has a constraint.
std::optional<GpuSet> FitRequests(const DraClaimAsk& claim, GpuSet free, const std::string* value) {
  GpuSet taken;
  for (const DraAskRequest& r : claim.requests) {
    int got = 0;
    for (int i : r.order) {
      if (value && (claim.values.size() <= size_t(i) || claim.values[i] != *value)) {
        if (r.count == DraAskRequest::kAll) return std::nullopt;
        continue;
      }
      if (r.count != DraAskRequest::kAll && got == r.count) break;
      if (!free.contains(i) || taken.contains(i)) {
        if (r.count == DraAskRequest::kAll) return std::nullopt;
        continue;
      }
      taken.Add(i);
      ++got;
    }
    if (r.count == DraAskRequest::kAll ? got == 0 : got < r.count) return std::nullopt;
  }
  return taken;
}

std::optional<GpuSet> FitClaim(const DraClaimAsk& claim, GpuSet free) {
  if (claim.values.empty()) return FitRequests(claim, free, nullptr);
  if (claim.requests.empty()) return GpuSet();
  std::set<std::string> tried;
  for (int i : claim.requests.front().order) {  // The first request's first device fixes the value.
    if (!free.contains(i) || size_t(i) >= claim.values.size() || claim.values[i].empty()) continue;
    if (!tried.insert(claim.values[i]).second) continue;
    if (auto set = FitRequests(claim, free, &claim.values[i])) return set;
  }
  return std::nullopt;
}

}  // namespace

void DraNodeAsk::Seal() {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (const DraClaimAsk& c : claims) {
    mix(0xC1);
    for (const DraAskRequest& r : c.requests) {
      mix(0xE0 + uint64_t(r.count + 1));
      for (int i : r.order) mix(uint64_t(i));
    }
    for (const std::string& v : c.values)
      for (char ch : v) mix(uint8_t(ch));
  }
  hash = h ? h : 1;
}

std::optional<GpuSet> PredictDraAsk(const DraNodeAsk& ask, GpuSet free) {
  GpuSet all;
  for (const DraClaimAsk& claim : ask.claims) {
    auto set = FitClaim(claim, free);
    if (!set) return std::nullopt;
    free = free - *set;
    all = all | *set;
  }
  return all;
}

}  // namespace topofit::cluster
