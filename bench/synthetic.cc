#include "bench/synthetic.h"

#include <random>
#include <sstream>
#include <vector>

#include "topology/profiles.h"

namespace topofit::bench {
namespace {

Result<std::vector<std::pair<std::string, int>>> ParseMix(const std::string& text, const char* what) {
  std::vector<std::pair<std::string, int>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t colon = item.rfind(':');
    if (colon == std::string::npos) return Error{std::string(what) + ": expected name:count, got '" + item + "'"};
    try {
      int n = std::stoi(item.substr(colon + 1));
      if (n < 0) throw std::invalid_argument("negative");
      out.emplace_back(item.substr(0, colon), n);
    } catch (const std::exception&) {
      return Error{std::string(what) + ": bad count in '" + item + "'"};
    }
  }
  if (out.empty()) return Error{std::string(what) + ": empty"};
  return out;
}

}  // namespace

Result<Workload> GenerateSynthetic(const SyntheticSpec& spec) {
  auto nodes = ParseMix(spec.node_mix, "node mix");
  if (!nodes) return Error{nodes.error()};
  auto sizes = ParseMix(spec.size_mix, "size mix");
  if (!sizes) return Error{sizes.error()};
  Workload w;
  for (const auto& [profile, count] : *nodes) {
    auto m = ProfileMatrix(profile);
    if (!m) return Error{"node mix: " + m.error()};
    int gpus = m->gpu_count();
    for (int i = 0; i < count; ++i) {
      NodeSpec n;
      n.name = profile + "-" + std::to_string(i);
      n.gpus = gpus;
      n.model = profile;
      n.profile = profile;
      n.cpu_milli = 12000LL * std::max(1, gpus);
      n.memory_mib = 49152LL * std::max(1, gpus);
      w.nodes.push_back(std::move(n));
    }
  }
  std::vector<int> size_of;
  std::vector<double> weights;
  for (const auto& [s, weight] : *sizes) {
    try {
      size_of.push_back(std::stoi(s));
    } catch (const std::exception&) {
      return Error{"size mix: bad size '" + s + "'"};
    }
    weights.push_back(weight);
  }
  std::mt19937_64 rng(spec.seed);
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  std::uniform_int_distribution<int> cores(4, 12), gib(16, 64);
  std::exponential_distribution<double> gap(1.0 / 60.0), life(1.0 / spec.mean_lifetime_s);
  double t = 0;
  for (int i = 0; i < spec.pods; ++i) {
    PodSpec p;
    p.name = "synthetic-pod-" + std::to_string(i);
    p.gpus = size_of[pick(rng)];
    p.gpu_milli = p.gpus > 0 ? 1000 : 0;
    int per = std::max(1, p.gpus);
    p.cpu_milli = 1000LL * cores(rng) * per;
    p.memory_mib = 1024LL * gib(rng) * per;
    if (spec.with_time) {
      t += gap(rng);
      p.creation_time = int64_t(t);
      p.deletion_time = int64_t(t + life(rng));
    }
    w.pods.push_back(std::move(p));
  }
  return w;
}

}  // namespace topofit::bench
