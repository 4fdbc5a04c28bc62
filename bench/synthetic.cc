#include "bench/synthetic.h"

#include <algorithm>
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

struct Family {
  std::string name, node_mix, size_mix;
  double bound = 0;          // Share of GPU pods bound to GPU models.
  int cores_lo = 4, cores_hi = 12;
  bool hetero_cpu = false;   // CPU per GPU by node size (synthetic.h), else 12 cores per GPU.
};

const std::vector<Family>& Families() {
  static const std::vector<Family> f = {
      {"", "dgx1-v100:16,pcie-8-dual-socket:16,phb-2-workstation:32", "1:70,2:10,4:10,8:10"},
      {"gpu-model", kHeterogeneousNodeMix, "1:70,2:10,4:10,8:10", 0.4, 4, 12, true},
      {"multi-gpu", kHeterogeneousNodeMix, "1:40,2:20,4:20,8:20", 0, 4, 12, true},
      {"cpu-heavy", kHeterogeneousNodeMix, "0:25,1:60,2:5,4:5,8:5", 0, 8, 32, true},
  };
  return f;
}

}  // namespace

const std::vector<std::string>& SyntheticFamilies() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& f : Families())
      if (!f.name.empty()) n.push_back(f.name);
    return n;
  }();
  return names;
}

Result<Workload> GenerateSynthetic(const SyntheticSpec& spec) {
  const Family* family = nullptr;
  for (const auto& f : Families())
    if (f.name == spec.family) family = &f;
  if (!family) {
    std::string known;
    for (const auto& n : SyntheticFamilies()) known += (known.empty() ? "" : ", ") + n;
    return Error{"unknown synthetic family '" + spec.family + "' (known: " + known + ")"};
  }
  auto nodes = ParseMix(spec.node_mix.empty() ? family->node_mix : spec.node_mix, "node mix");
  if (!nodes) return Error{nodes.error()};
  auto sizes = ParseMix(spec.size_mix.empty() ? family->size_mix : spec.size_mix, "size mix");
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
      const int64_t cores_per_gpu = !family->hetero_cpu || gpus >= 8 ? 12 : gpus >= 4 ? 16 : 24;
      n.cpu_milli = 1000LL * cores_per_gpu * std::max(1, gpus);
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
  std::uniform_int_distribution<int> cores(family->cores_lo, family->cores_hi), gib(16, 64);
  std::uniform_real_distribution<double> unit(0, 1);
  // GPU models with their capacity, and the most GPUs one node of each has.
  std::vector<std::string> models;
  std::vector<int64_t> model_gpus;
  std::vector<int> model_max;
  for (const auto& n : w.nodes) {
    auto it = std::find(models.begin(), models.end(), n.model);
    if (it == models.end()) {
      models.push_back(n.model);
      model_gpus.push_back(0);
      model_max.push_back(0);
      it = models.end() - 1;
    }
    model_gpus[it - models.begin()] += n.gpus;
    model_max[it - models.begin()] = std::max(model_max[it - models.begin()], n.gpus);
  }
  auto draw_model = [&](int gpus, const std::string& other) -> std::string {
    std::vector<double> w8(models.size(), 0.0);
    double sum = 0;
    for (size_t m = 0; m < models.size(); ++m)
      if (model_max[m] >= gpus && models[m] != other) sum += (w8[m] = double(model_gpus[m]));
    if (sum <= 0) return "";
    std::discrete_distribution<size_t> d(w8.begin(), w8.end());
    return models[d(rng)];
  };
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
    if (p.gpus > 0 && family->bound > 0 && unit(rng) < family->bound) {
      std::string first = draw_model(p.gpus, "");
      if (!first.empty()) p.gpu_models.push_back(first);
      if (!first.empty() && unit(rng) < 1.0 / 3) {
        std::string second = draw_model(p.gpus, first);
        if (!second.empty()) p.gpu_models.push_back(second);
      }
    }
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
