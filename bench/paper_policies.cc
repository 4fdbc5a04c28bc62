#include "bench/paper_policies.h"

#include <algorithm>

#include "bench/scored_policy.h"

namespace topofit::bench {
namespace {

// The simulator's normalisation constants (open-gpu-share utils: MaxSpecCpu, MaxSpecGpu).
constexpr double kMaxSpecCpu = 128000;
constexpr double kMaxSpecGpuMilli = 8000;

class RandomPolicy final : public ScoredPolicy {
 public:
  std::string name() const override { return "random"; }

 protected:
  int64_t Score(const SimCluster&, const SimNode&, const PodSpec&) override {
    return std::uniform_int_distribution<int64_t>(0, 100)(rng());
  }
};

template <int64_t (*F)(const SimNode&, const PodSpec&)>
class FnPolicy final : public ScoredPolicy {
 public:
  explicit FnPolicy(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }

 protected:
  int64_t Score(const SimCluster&, const SimNode& node, const PodSpec& pod) override { return F(node, pod); }

 private:
  std::string name_;
};

}  // namespace

int64_t BestFitScore(const SimNode& node, const PodSpec& pod) {
  double cpu_left = double(node.free_cpu - pod.cpu_milli) / kMaxSpecCpu;
  double gpu_left = double(node.free_gpus() - pod.gpus) * 1000.0 / kMaxSpecGpuMilli;
  double s = 0.5 * cpu_left + 0.5 * gpu_left;  // [0, 1], lower is a tighter fit
  return int64_t((1.0 - s) * 100.0);
}

int64_t DotProdScore(const SimNode& node, const PodSpec& pod) {
  double dot = (double(node.free_cpu) / kMaxSpecCpu) * (double(pod.cpu_milli) / kMaxSpecCpu) +
               (double(node.free_gpus()) * 1000.0 / kMaxSpecGpuMilli) * (double(pod.gpus) * 1000.0 / kMaxSpecGpuMilli);
  return int64_t(100.0 * (1.0 - dot / 2.0));
}

int64_t GpuPackingScore(const SimNode& node, const PodSpec& pod) {
  if (pod.gpus <= 0) return 0;
  int free = node.free_gpus();
  if (free == node.all.size()) return std::max<int64_t>(100 / 3 - free, free);
  return std::max<int64_t>(100 / 2 - pod.gpus, 100 / 3);
}

std::unique_ptr<Policy> MakeRandomPolicy() { return std::make_unique<RandomPolicy>(); }
std::unique_ptr<Policy> MakeBestFitPolicy() { return std::make_unique<FnPolicy<BestFitScore>>("bestfit"); }
std::unique_ptr<Policy> MakeDotProdPolicy() { return std::make_unique<FnPolicy<DotProdScore>>("dotprod"); }
std::unique_ptr<Policy> MakeGpuPackingPolicy() { return std::make_unique<FnPolicy<GpuPackingScore>>("gpu-packing"); }

}  // namespace topofit::bench
