#include "bench/synthetic.h"

#include <algorithm>
#include <random>
#include <sstream>
#include <vector>

#include "bench/shared_node_types.h"
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
  int gib_lo = 16, gib_hi = 64;
  double packed = 0;         // Share of pods annotated topofit.io/replica-placement: packed.
};

const std::vector<Family>& Families() {
  static const std::vector<Family> f = {
      {"", "dgx1-v100:16,pcie-8-dual-socket:16,phb-2-workstation:32", "1:70,2:10,4:10,8:10"},
      {"gpu-model", kHeterogeneousNodeMix, "1:70,2:10,4:10,8:10", 0.4, 4, 12, true},
      {"multi-gpu", kHeterogeneousNodeMix, "1:40,2:20,4:20,8:20", 0, 4, 12, true},
      {"cpu-heavy", kHeterogeneousNodeMix, "0:25,1:60,2:5,4:5,8:5", 0, 8, 32, true},
      {"shared", kSharedNodeMix, "1:60,2:15,4:15,8:10", 0, 1, 2, false, 4, 8, 0.25},
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

namespace {

const Family* FindFamily(const std::string& name) {
  for (const auto& f : Families())
    if (f.name == name) return &f;
  return nullptr;
}

// `count` nodes of each profile of the mix, with the family's CPU and memory per GPU; "<profile>@<shape>"
// shares their GPUs (shared_node_types.h).
Status AddNodes(const std::vector<std::pair<std::string, int>>& mix, const Family& family, std::vector<NodeSpec>& out) {
  for (const auto& [entry, count] : mix) {
    const size_t at = entry.find('@');
    const std::string profile = entry.substr(0, at);
    const std::string shape = at == std::string::npos ? "" : entry.substr(at + 1);
    auto m = ProfileMatrix(profile);
    if (!m) return Error{"node mix: " + m.error()};
    int gpus = m->gpu_count();
    for (int i = 0; i < count; ++i) {
      NodeSpec n;
      n.name = entry + "-" + std::to_string(i);
      n.gpus = gpus;
      n.model = profile;
      n.profile = profile;
      const int64_t cores_per_gpu = !family.hetero_cpu || gpus >= 8 ? 12 : gpus >= 4 ? 16 : 24;
      n.cpu_milli = 1000LL * cores_per_gpu * std::max(1, gpus);
      n.memory_mib = 49152LL * std::max(1, gpus);
      if (!shape.empty())
        if (Status st = ApplySharingShape(shape, n); !st.ok()) return Error{"node mix: " + st.error()};
      out.push_back(std::move(n));
    }
  }
  return Status::Ok();
}

// The size mix as pod sizes and their weights.
struct Sizes {
  std::vector<int> size_of;
  std::vector<double> weights;
};

Result<Sizes> ParseSizes(const std::vector<std::pair<std::string, int>>& mix) {
  Sizes out;
  for (const auto& [s, weight] : mix) {
    try {
      out.size_of.push_back(std::stoi(s));
    } catch (const std::exception&) {
      return Error{"size mix: bad size '" + s + "'"};
    }
    out.weights.push_back(weight);
  }
  return out;
}

// The GPU models of the nodes with their capacity, and the most GPUs one node of each has.
class ModelPool {
 public:
  explicit ModelPool(const std::vector<NodeSpec>& nodes) {
    for (const auto& n : nodes) {
      auto it = std::find(models_.begin(), models_.end(), n.model);
      if (it == models_.end()) {
        models_.push_back(n.model);
        gpus_.push_back(0);
        max_.push_back(0);
        it = models_.end() - 1;
      }
      gpus_[it - models_.begin()] += n.gpus;
      max_[it - models_.begin()] = std::max(max_[it - models_.begin()], n.gpus);
    }
  }

  // A model other than `other` with a node of at least `gpus` GPUs, drawn by capacity; "" when none.
  std::string Draw(std::mt19937_64& rng, int gpus, const std::string& other) const {
    std::vector<double> w8(models_.size(), 0.0);
    double sum = 0;
    for (size_t m = 0; m < models_.size(); ++m)
      if (max_[m] >= gpus && models_[m] != other) sum += (w8[m] = double(gpus_[m]));
    if (sum <= 0) return "";
    std::discrete_distribution<size_t> d(w8.begin(), w8.end());
    return models_[d(rng)];
  }

 private:
  std::vector<std::string> models_;
  std::vector<int64_t> gpus_;
  std::vector<int> max_;
};

// Draws the pods, one after another from one generator: the order of the draws is the workload.
class PodDraws {
 public:
  PodDraws(const SyntheticSpec& spec, const Family& family, const Sizes& sizes, const ModelPool& pool)
      : spec_(spec), family_(family), size_of_(sizes.size_of), pool_(pool), rng_(spec.seed),
        pick_(sizes.weights.begin(), sizes.weights.end()), cores_(family.cores_lo, family.cores_hi),
        gib_(family.gib_lo, family.gib_hi), life_(1.0 / spec.mean_lifetime_s) {}

  PodSpec Next(int i) {
    PodSpec p;
    p.name = "synthetic-pod-" + std::to_string(i);
    p.gpus = size_of_[pick_(rng_)];
    p.gpu_milli = p.gpus > 0 ? 1000 : 0;
    int per = std::max(1, p.gpus);
    p.cpu_milli = 1000LL * cores_(rng_) * per;
    p.memory_mib = 1024LL * gib_(rng_) * per;
    if (p.gpus > 0 && family_.bound > 0 && unit_(rng_) < family_.bound) {
      std::string first = pool_.Draw(rng_, p.gpus, "");
      if (!first.empty()) p.gpu_models.push_back(first);
      if (!first.empty() && unit_(rng_) < 1.0 / 3) {
        std::string second = pool_.Draw(rng_, p.gpus, first);
        if (!second.empty()) p.gpu_models.push_back(second);
      }
    }
    if (family_.packed > 0) p.packed = unit_(rng_) < family_.packed;
    if (spec_.with_time) {
      t_ += gap_(rng_);
      p.creation_time = int64_t(t_);
      p.deletion_time = int64_t(t_ + life_(rng_));
    }
    return p;
  }

 private:
  const SyntheticSpec& spec_;
  const Family& family_;
  const std::vector<int>& size_of_;
  const ModelPool& pool_;
  std::mt19937_64 rng_;
  std::discrete_distribution<int> pick_;
  std::uniform_int_distribution<int> cores_, gib_;
  std::uniform_real_distribution<double> unit_{0, 1};
  std::exponential_distribution<double> gap_{1.0 / 60.0}, life_;
  double t_ = 0;
};

}  // namespace

Result<Workload> GenerateSynthetic(const SyntheticSpec& spec) {
  const Family* family = FindFamily(spec.family);
  if (!family) {
    std::string known;
    for (const auto& n : SyntheticFamilies()) known += (known.empty() ? "" : ", ") + n;
    return Error{"unknown synthetic family '" + spec.family + "' (known: " + known + ")"};
  }
  auto nodes = ParseMix(spec.node_mix.empty() ? family->node_mix : spec.node_mix, "node mix");
  if (!nodes) return Error{nodes.error()};
  auto mix = ParseMix(spec.size_mix.empty() ? family->size_mix : spec.size_mix, "size mix");
  if (!mix) return Error{mix.error()};
  Workload w;
  if (Status s = AddNodes(*nodes, *family, w.nodes); !s.ok()) return Error{s.error()};
  auto sizes = ParseSizes(*mix);
  if (!sizes) return Error{sizes.error()};
  const ModelPool pool(w.nodes);
  PodDraws draws(spec, *family, *sizes, pool);
  for (int i = 0; i < spec.pods; ++i) w.pods.push_back(draws.Next(i));
  return w;
}

}  // namespace topofit::bench
