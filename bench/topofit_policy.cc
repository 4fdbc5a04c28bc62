#include "bench/topofit_policy.h"

#include <random>
#include <string>
#include <vector>

#include "bench/dra_nodes.h"
#include "bench/host_selection.h"
#include "bench/kube_policies.h"
#include "extender/k8s/objects.h"
#include "extender/cluster/cluster_model.h"
#include "extender/cluster/dra_cluster.h"
#include "extender/placement/dra_prediction.h"
#include "extender/placement/pipeline.h"

namespace topofit::bench {

int64_t InTreeDefaultScore(const SimNode& node, const PodSpec& pod) {
  return LeastAllocatedScore(node, pod) + BalancedAllocationScore(node, pod);
}

int64_t InTreeScore(const SimNode& node, const PodSpec& pod, bool most_allocated) {
  if (!most_allocated) return InTreeDefaultScore(node, pod);
  return MostAllocatedScore(node, pod) + BalancedAllocationScore(node, pod);
}

namespace {

class TopofitPolicy final : public Policy {
 public:
  explicit TopofitPolicy(const PolicyOptions& o)
      : weight_(o.extender_weight), most_(o.in_tree == "most"), config_(o.pipeline) {}
  std::string name() const override { return most_ ? "topofit-mostallocated" : "topofit"; }

  ExtenderStats extender_stats() const override { return stats_; }

  Status Reset(const SimCluster& cluster, uint64_t seed) override {
    rng_.seed(seed);
    stats_ = {};
    pipeline_.reset();
    dra_.reset();
    model_ = std::make_unique<cluster::ClusterModel>();
    dra_ = std::make_unique<cluster::DraCluster>(*model_);
    if (auto st = placement::Pipeline::Validate(config_); !st) return Error{"topofit pipeline: " + st.error()};
    pipeline_ = std::make_unique<placement::Pipeline>(model_.get(), config_);
    names_.clear();
    // As `topofit serve` loads a cluster: every node through the DraCluster, which hands device-plugin
    // nodes to the model and models DRA nodes from their slices (docs/dra.md).
    if (cluster.any_dra()) dra_->ApplyDeviceClass(GpuDeviceClass());
    for (const auto& n : cluster.nodes())
      if (n.dra) dra_->ApplyResourceSlice(NodeGpuSlice(n));
    for (const auto& n : cluster.nodes()) {
      dra_->ApplyNode(NodeObject(cluster, n));
      names_.push_back(n.spec->name);
    }
    return Status::Ok();
  }

  Placement Place(const SimCluster& cluster, const PodSpec& pod, std::span<const int> feasible) override {
    Placement p;
    if (pod.gpus <= 0) {
      std::vector<int> ext;
      if (config_.score_pods_without_gpus) {  // The extender sees these pods too (no managedResources).
        std::vector<std::string_view> names;
        names.reserve(feasible.size());
        for (int i : feasible) names.push_back(names_[i]);
        ext.assign(feasible.size(), 0);
        for (const auto& s : pipeline_->Prioritize(Request(pod), std::span<const std::string_view>(names)))
          ext[s.index] = s.score;
      }
      p.node = PickMax(cluster, pod, feasible, ext);
      return p;
    }
    cluster::PodRequest req = Request(pod);
    std::vector<std::string_view> names;
    names.reserve(feasible.size());
    for (int i : feasible) names.push_back(names_[i]);
    placement::FilterOutcome f = pipeline_->Filter(req, std::span<const std::string_view>(names));
    if (f.passed.empty()) return p;
    std::vector<std::string_view> passed_names;
    std::vector<int> passed;
    for (uint32_t idx : f.passed) {
      passed_names.push_back(names[idx]);
      passed.push_back(feasible[idx]);
    }
    std::vector<int> ext(passed.size(), 0);
    // Prioritize is skipped by kube-scheduler when one node is left; scoring it anyway changes nothing.
    // With filter_keeps_best the extender is deployed without a prioritize verb: in-tree scores alone
    // choose among the nodes filter kept.
    if (!config_.filter_keeps_best) {
      for (const auto& s : pipeline_->Prioritize(req, std::span<const std::string_view>(passed_names))) {
        ext[s.index] = s.score;
      }
    }
    int choice = PickMax(cluster, pod, passed, ext);
    if (choice < 0) return p;
    if (!config_.filter_keeps_best && passed.size() > 1) {
      // Did kube-scheduler's in-tree scores carry the pod off the extender's best band?
      int best = 0, chosen = 0;
      for (size_t i = 0; i < passed.size(); ++i) {
        best = std::max(best, ext[i]);
        if (passed[i] == choice) chosen = ext[i];
      }
      ++stats_.decisions;
      if (chosen < best) ++stats_.overridden;
    }
    if (cluster.node(choice).dra && !AllocateClaim(cluster, req, choice)) return p;
    auto set = pipeline_->ReserveBest(req, names_[choice]);
    if (!set) return p;
    (void)pipeline_->Confirm(req.uid);
    p.node = choice;
    p.gpus = *set;
    return p;
  }

  // A pod without GPUs still takes CPU and memory on its node; the extender's model learns it from the
  // pod watch (a bound pod), which is what this does. GPU pods of device-plugin nodes are already held
  // by ReserveBest with their CPU and memory; on a DRA node ReserveBest kept the holding the claim made,
  // which has GPUs only, and the watch's bound pod (its GPUs from the claim: DraCluster::Pod) brings
  // the rest, as in serve.
  void Bound(const SimCluster& cluster, const PodSpec& pod, const Placement& placement) override {
    if (pod.gpus > 0 && !cluster.node(placement.node).dra) return;
    k8s::PodObject obj;
    obj.meta.uid = pod.name;
    obj.meta.name = pod.name;
    obj.meta.namespace_ = "bench";
    obj.cpu_milli = pod.cpu_milli;
    obj.memory_bytes = pod.memory_mib << 20;
    obj.gpus = pod.gpus;
    obj.node_name = names_[placement.node];
    obj.phase = "Running";
    model_->ApplyPod(dra_->Pod(obj));
  }

  void Released(const SimCluster& cluster, const PodSpec& pod, const Placement& placement) override {
    if (pod.gpus > 0 && cluster.node(placement.node).dra) dra_->DeleteResourceClaim(PodGpuClaimUid(pod.name));
    dra_->ForgetPod(pod.name);
    model_->DeletePod(pod.name);
  }

 private:
  cluster::PodRequest Request(const PodSpec& pod) const {
    cluster::PodRequest r;
    r.uid = pod.name;
    r.namespace_ = "bench";
    r.name = pod.name;
    r.gpus = pod.gpus;
    r.cpu_milli = pod.cpu_milli;  // As kube-scheduler's pod carries them: the model holds them with the GPUs.
    r.memory_bytes = pod.memory_mib << 20;
    r.gpu_products = pod.gpu_models;  // gpu_spec, as a node selector on nvidia.com/gpu.product.
    r.intent.packed_replicas = pod.packed;  // topofit.io/replica-placement: packed.
    return r;
  }

  // The node as its kubelet publishes it: a DRA node advertises no nvidia.com/gpu. Its topology in the
  // topofit.io/gpu-topology annotation; the GPU model as GPU Feature Discovery labels it (what a pod's
  // gpu_spec, a node selector, names).
  static k8s::NodeObject NodeObject(const SimCluster& cluster, const SimNode& n) {
    k8s::NodeObject obj;
    obj.meta.name = n.spec->name;
    obj.allocatable_gpus = obj.capacity_gpus = n.dra ? 0 : n.spec->gpus;
    obj.allocatable_cpu_milli = n.spec->cpu_milli;
    obj.allocatable_memory_bytes = n.spec->memory_mib << 20;
    if (n.type >= 0) obj.meta.annotations[k8s::kTopologyAnnotation] = cluster.types()[n.type].annotation;
    if (!n.spec->model.empty()) obj.meta.labels[k8s::kGfdProductLabel] = n.spec->model;
    for (const auto& [k, v] : n.spec->labels) obj.meta.labels[k] = v;  // A shared node's, as GFD labels it.
    return obj;
  }

  // On a DRA node kube-scheduler's DRA plugin allocates the pod's claim (its first fit) and writes it
  // at PreBind, before the bind: the model gets the claim as the watch brings it, and the bind reads
  // it as serve's does (ViewDraBind, then ReserveBest takes the claim's GPUs). Counts predictions
  // that missed. False when the node has too few free GPUs.
  bool AllocateClaim(const SimCluster& cluster, const cluster::PodRequest& req, int node) {
    GpuSet got = DraFirstFit(cluster.node(node), req.gpus);
    if (got.empty()) return false;
    dra_->ApplyResourceClaim(PodGpuClaim(req.uid, names_[node], got));
    const placement::DraBindView view = placement::ViewDraBind(*pipeline_, req, names_[node], dra_->AllocationOf(req.uid));
    ++stats_.dra_binds;
    // view.predicted: the first fit over the GPUs free before the claim (ViewDraBind).
    if (!view.allocated || *view.allocated != got || view.predicted != got) ++stats_.dra_mispredicted;
    return true;
  }

  // kube-scheduler's choice: highest in-tree + extender total, ties at random (selectHost).
  int PickMax(const SimCluster& cluster, const PodSpec& pod, std::span<const int> nodes, const std::vector<int>& ext) {
    int k = SelectHost(nodes.size(), [&](size_t i) {
      return InTreeScore(cluster.node(nodes[i]), pod, most_) + (ext.empty() ? 0 : ExtenderTotal(ext[i], weight_));
    }, rng_);
    return k < 0 ? -1 : nodes[k];
  }

  int weight_;
  bool most_;
  ExtenderStats stats_;
  placement::PipelineConfig config_;
  std::mt19937_64 rng_;
  std::unique_ptr<cluster::ClusterModel> model_;
  std::unique_ptr<cluster::DraCluster> dra_;
  std::unique_ptr<placement::Pipeline> pipeline_;
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<Policy> MakeTopofitPolicy(const PolicyOptions& options) {
  return std::make_unique<TopofitPolicy>(options);
}

}  // namespace topofit::bench
