#include "extender/model/node_state.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

namespace topofit::model {

std::atomic<uint64_t> NodeState::next_seq_{1};

namespace {
constexpr Duration::rep kNever = std::numeric_limits<Duration::rep>::max();

std::string GpuList(GpuSet s) { return s.size() == 1 ? "GPU " + s.ToString() : "GPUs " + s.ToString(); }
}  // namespace

std::string_view ToString(HoldingKind kind) {
  switch (kind) {
    case HoldingKind::kBound: return "bound";
    case HoldingKind::kReserved: return "reserved";
    case HoldingKind::kConfirmed: return "confirmed";
  }
  return "?";
}

namespace {
struct ProductRegistry {
  std::mutex mu;
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::string> names{""};
};
ProductRegistry& Products() {
  static ProductRegistry* r = new ProductRegistry();  // Never destroyed: ids outlive every model.
  return *r;
}
}  // namespace

uint32_t GpuProductId(std::string_view product) {
  if (product.empty()) return 0;
  ProductRegistry& r = Products();
  std::lock_guard lock(r.mu);
  auto [it, added] = r.ids.try_emplace(std::string(product), uint32_t(r.names.size()));
  if (added) r.names.emplace_back(product);
  return it->second;
}

std::string GpuProductName(uint32_t id) {
  ProductRegistry& r = Products();
  std::lock_guard lock(r.mu);
  return id < r.names.size() ? r.names[id] : std::string();
}

NodeState::NodeState(std::string name, ResolvedTopology spec, NodeResources allocatable, std::string_view gpu_product)
    : free_(spec.usable.mask()),
      next_expiry_(kNever),
      usable_(spec.usable),
      topology_(spec.topology.get()),
      name_size_(static_cast<uint32_t>(name.size())),
      product_id_(GpuProductId(gpu_product)),
      allocatable_(allocatable),
      name_(std::move(name)),
      spec_(std::move(spec)) {
  if (name_.size() <= kInlineName) std::copy(name_.begin(), name_.end(), name_inline_);
  static_assert(sizeof(std::atomic<uint64_t>) * 2 + sizeof(GpuSet) + sizeof(void*) + 2 * sizeof(uint32_t) + kInlineName +
                        3 * sizeof(int64_t) + sizeof(NodeResources) <= 128,
                "the hot and warm fields must fit the two lines FindAll prefetches");
}

void NodeState::RecountLocked() {
  const GpuSet usable = spec_.usable;
  GpuSet held;
  holding_warnings_.clear();
  // Pass 1: claims, first come first served.
  for (Holding& h : holdings_) {
    GpuSet previous = h.unknown_identity ? h.gpus : GpuSet();
    h.conflict.clear();
    h.unknown_identity = false;
    h.gpus = previous;  // Kept only as a hint for pass 2.
    if (h.count == 0) continue;  // CPU/memory only.
    if (!h.claim_error.empty()) {
      h.conflict = h.claim_error;
    } else if (h.claimed.empty()) {
      h.unknown_identity = true;
      continue;
    } else if (!h.claimed.IsSubsetOf(usable)) {
      h.conflict = fmt::format("names {} but the node's usable GPUs are {}", GpuList(h.claimed - usable),
                               usable.empty() ? "none" : usable.ToString());
    } else if (h.claimed.size() != h.count) {
      h.conflict = fmt::format("names {} GPUs ({}) but requests {}", h.claimed.size(), h.claimed.ToString(),
                               h.count);
    } else if (h.claimed.Intersects(held)) {
      GpuSet clash = h.claimed & held;
      std::string holder;
      for (const Holding& o : holdings_) {
        if (&o == &h) break;
        if (!o.unknown_identity && o.gpus.Intersects(clash)) {
          holder = o.pod;
          break;
        }
      }
      h.conflict = fmt::format("names {} already held by {}", GpuList(clash), holder);
    } else {
      h.gpus = h.claimed;
      held = held | h.claimed;
      continue;
    }
    h.unknown_identity = true;
  }
  // Pass 2: GPUs of unknown identity, pessimistically the best set still free (the GPUs whose loss
  // hurts most). A previous guess that is still free stays put, so guesses do not wander.
  int overcommitted = 0;
  for (Holding& h : holdings_) {
    if (!h.unknown_identity || h.count == 0) continue;
    GpuSet free = usable - held;
    GpuSet take;
    if (h.count > free.size()) {
      take = free;
      overcommitted += h.count - free.size();
    } else if (!h.gpus.empty() && h.gpus.IsSubsetOf(free) && h.gpus.size() == h.count) {
      take = h.gpus;
    } else {
      std::optional<SetChoice> best;
      if (spec_.topology && h.count >= 1) best = spec_.topology->selector().Best(free, h.count);
      if (best) {
        take = best->gpus;
      } else {
        for (int i : free.Indices()) {
          if (take.size() == h.count) break;
          take.Add(i);
        }
      }
    }
    h.gpus = take;
    held = held | take;
    if (!h.conflict.empty()) {
      holding_warnings_.push_back(fmt::format("pod {} {}; counted as {} GPUs of unknown identity ({})", h.pod,
                                              h.conflict, h.count, take.ToString()));
    } else {
      holding_warnings_.push_back(fmt::format("pod {} holds {} GPUs of unknown identity (no {}); counted as {}",
                                              h.pod, h.count, k8s::kGpuIdsAnnotation, take.ToString()));
    }
  }
  if (overcommitted > 0) {
    holding_warnings_.push_back(fmt::format("over-committed: pods hold {} more GPUs than the node's {} usable",
                                            overcommitted, usable.size()));
  }
  Duration::rep next = kNever;
  int64_t cpu = 0, memory = 0;
  for (const Holding& h : holdings_) {
    if (h.kind == HoldingKind::kReserved) next = std::min(next, h.expires.time_since_epoch().count());
    cpu += h.cpu_milli;
    memory += h.memory_bytes;
  }
  used_cpu_.store(cpu, std::memory_order_release);
  used_memory_.store(memory, std::memory_order_release);
  free_.store((usable - held).mask(), std::memory_order_release);
  next_expiry_.store(next, std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

void NodeState::Upsert(Holding h) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(holdings_.begin(), holdings_.end(), [&](const Holding& o) { return o.uid == h.uid; });
  if (it == holdings_.end()) {
    h.seq = next_seq_.fetch_add(1);
    h.gpus = GpuSet();
    h.unknown_identity = false;
    holdings_.push_back(std::move(h));
  } else {
    if (h.kind == HoldingKind::kBound && it->kind != HoldingKind::kBound && h.claimed.empty()) {
      h.claimed = it->claimed;  // Our bind chose them; the annotation has not arrived (yet).
    }
    if (it->kind == h.kind && it->claimed == h.claimed && it->count == h.count && it->priority == h.priority &&
        it->pod == h.pod && it->claim_error == h.claim_error && it->cpu_milli == h.cpu_milli &&
        it->memory_bytes == h.memory_bytes) {
      return;  // Nothing changed (status update, re-list).
    }
    h.seq = it->seq;
    h.gpus = it->unknown_identity ? it->gpus : GpuSet();
    h.unknown_identity = it->unknown_identity;
    *it = std::move(h);
  }
  RecountLocked();
}

bool NodeState::Remove(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(holdings_.begin(), holdings_.end(), [&](const Holding& o) { return o.uid == uid; });
  if (it == holdings_.end()) return false;
  holdings_.erase(it);
  RecountLocked();
  return true;
}

void NodeState::Expire(TimePoint now, std::vector<std::string>* expired) {
  std::lock_guard lock(mu_);
  bool any = false;
  for (auto it = holdings_.begin(); it != holdings_.end();) {
    if (it->kind == HoldingKind::kReserved && it->expires <= now) {
      if (expired) expired->push_back(it->uid);
      it = holdings_.erase(it);
      any = true;
    } else {
      ++it;
    }
  }
  if (any) RecountLocked();
}

Result<GpuSet> NodeState::Reserve(const PodRequest& pod, TimePoint expires, const Chooser& choose) {
  const std::string& uid = pod.uid;
  const int count = pod.gpus;
  std::lock_guard lock(mu_);
  for (Holding& h : holdings_) {
    if (h.uid != uid) continue;
    if (h.kind == HoldingKind::kReserved && h.expires < expires) {
      h.expires = expires;  // A retried bind keeps its GPUs a little longer.
      RecountLocked();
    }
    return h.gpus;
  }
  const GpuSet free = GpuSet(free_.load(std::memory_order_acquire));
  std::optional<GpuSet> chosen = choose(*this, free);
  if (!chosen) return Error{"no free set"};
  if (!chosen->IsSubsetOf(free) || chosen->size() != count) {
    // The chooser saw a different state or broke its contract; never grant such a set.
    return Error{fmt::format("internal: chosen GPUs {} are not {} free GPUs of {}", chosen->ToString(), count,
                             free.ToString())};
  }
  Holding h;
  h.uid = uid;
  h.pod = pod.key();
  h.count = count;
  h.claimed = *chosen;
  h.kind = HoldingKind::kReserved;
  h.priority = pod.priority;
  h.cpu_milli = pod.cpu_milli;
  h.memory_bytes = pod.memory_bytes;
  h.expires = expires;
  h.seq = next_seq_.fetch_add(1);
  holdings_.push_back(std::move(h));
  RecountLocked();
  return *chosen;
}

bool NodeState::Confirm(std::string_view uid) {
  std::lock_guard lock(mu_);
  for (Holding& h : holdings_) {
    if (h.uid != uid) continue;
    if (h.kind == HoldingKind::kReserved) {
      h.kind = HoldingKind::kConfirmed;
      RecountLocked();
    }
    return true;
  }
  return false;
}

bool NodeState::ReleaseReservation(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(holdings_.begin(), holdings_.end(), [&](const Holding& o) { return o.uid == uid; });
  if (it == holdings_.end() || it->kind == HoldingKind::kBound) return false;
  holdings_.erase(it);
  RecountLocked();
  return true;
}

std::vector<Holding> NodeState::Holdings() const {
  std::lock_guard lock(mu_);
  return holdings_;
}

std::optional<Holding> NodeState::Find(std::string_view uid) const {
  std::lock_guard lock(mu_);
  for (const Holding& h : holdings_)
    if (h.uid == uid) return h;
  return std::nullopt;
}

std::vector<std::string> NodeState::Warnings() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out = spec_.warnings;
  out.insert(out.end(), holding_warnings_.begin(), holding_warnings_.end());
  return out;
}

}  // namespace topofit::model
