#include "bench/kube_policies.h"

#include <algorithm>
#include <cmath>

#include "bench/scored_policy.h"

namespace topofit::bench {
namespace {

constexpr int64_t kMaxNodeScore = 100;

// Upstream leastRequestedScore / mostRequestedScore for one resource.
int64_t LeastRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}
int64_t MostRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;
  return requested * kMaxNodeScore / capacity;
}

struct Usage {
  int64_t cpu_req, cpu_cap, mem_req, mem_cap, gpu_req, gpu_cap;
};
Usage UsageAfter(const SimNode& n, const PodSpec& pod) {
  const NodeSpec& s = *n.spec;
  return {s.cpu_milli - n.free_cpu + pod.cpu_milli, s.cpu_milli,
          s.memory_mib - n.free_mem + pod.memory_mib, s.memory_mib,
          int64_t(n.used_gpus() + pod.gpus), int64_t(n.all.size())};
}

class KubePolicy final : public ScoredPolicy {
 public:
  explicit KubePolicy(bool most) : most_(most) {}
  std::string name() const override { return most_ ? "kube-mostallocated" : "kube-default"; }

 protected:
  int64_t Score(const SimCluster&, const SimNode& node, const PodSpec& pod) override {
    int64_t fit = most_ ? MostAllocatedScore(node, pod) : LeastAllocatedScore(node, pod);
    return fit + BalancedAllocationScore(node, pod);
  }

 private:
  bool most_;
};

}  // namespace

int64_t LeastAllocatedScore(const SimNode& node, const PodSpec& pod) {
  Usage u = UsageAfter(node, pod);
  return (LeastRequested(u.cpu_req, u.cpu_cap) + LeastRequested(u.mem_req, u.mem_cap)) / 2;
}

int64_t MostAllocatedScore(const SimNode& node, const PodSpec& pod) {
  Usage u = UsageAfter(node, pod);
  // A resource the node does not have (GPU on a CPU-only node) is skipped with its weight, as
  // upstream skips resources whose allocatable is 0.
  int64_t sum = MostRequested(u.cpu_req, u.cpu_cap) + MostRequested(u.mem_req, u.mem_cap);
  int64_t weights = 2;
  if (u.gpu_cap > 0) {
    sum += MostRequested(u.gpu_req, u.gpu_cap);
    ++weights;
  }
  return sum / weights;
}

int64_t BalancedAllocationScore(const SimNode& node, const PodSpec& pod) {
  Usage u = UsageAfter(node, pod);
  double f1 = u.cpu_cap ? std::min(1.0, double(u.cpu_req) / double(u.cpu_cap)) : 0.0;
  double f2 = u.mem_cap ? std::min(1.0, double(u.mem_req) / double(u.mem_cap)) : 0.0;
  // Upstream: with two resources the standard deviation is |f1 - f2| / 2.
  double std_dev = std::abs(f1 - f2) / 2;
  return int64_t((1 - std_dev) * double(kMaxNodeScore));
}

std::unique_ptr<Policy> MakeKubeDefaultPolicy() { return std::make_unique<KubePolicy>(false); }
std::unique_ptr<Policy> MakeKubeMostAllocatedPolicy() { return std::make_unique<KubePolicy>(true); }

}  // namespace topofit::bench
