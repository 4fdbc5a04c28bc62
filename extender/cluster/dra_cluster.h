#pragma once
// DraCluster: puts what DRA says about GPUs into the ClusterModel, beside the Nodes and Pods
// (docs/dra.md). Watches and snapshot loaders hand it every Node, Pod, DeviceClass, ResourceSlice
// and ResourceClaim; it keeps what it needs of them in a DraInventory and tells the model:
//
// - A node with no nvidia.com/gpu allocatable whose slices hold devices of the GPU class (the
//   DeviceClass mapping nvidia.com/gpu) is a DRA node: the model gets it with its DraNodeGpus
//   (ClusterModel::ApplyNode), i.e. its GPUs counted, named, numbered and ordered from its devices.
//   A node with nvidia.com/gpu allocatable is a device-plugin node whatever its slices say: the
//   scheduler sends the resource to DRA only where the node does not advertise it.
// - An allocated claim holds its GPUs. The claim kube-scheduler writes for a pod's DRA-backed
//   nvidia.com/gpu (annotation resource.kubernetes.io/extended-resource-claim) is that pod's: the
//   pod's holding names the claim's GPUs as its observed assignment (gpu-actual, built from the
//   claim: per claim request, the GPUs' identities), from the moment the claim is allocated - before
//   the pod is bound, as PreBind allocates before bind. Any other allocated claim (users' own) holds
//   its GPUs as a holding of its own, uid "resourceclaim:<claim uid>", pod "<namespace>/<claim>".
// - Pod(): what the model must get for a pod - the pod with its claim's assignment when it has one.
// - AskOf(): what a pod that asks GPUs through its own claims (or deviceclass.resource.kubernetes.io/
//   <class>) will get on each DRA node, for scoring it (dra_pod_ask.h).
//
// Every call is idempotent, like the model's writers. Thread-safe: one mutex, held while the model is
// told (lock order: DraCluster before the model's locks; the model never calls back).

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>
#include <string>
#include <string_view>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/dra_inventory.h"
#include "extender/cluster/dra_pod_ask.h"
#include "extender/k8s/dra_objects.h"

namespace topofit::cluster {

inline constexpr const char* kClaimHoldingPrefix = "resourceclaim:";

class DraCluster {
 public:
  explicit DraCluster(ClusterModel& model) : model_(model) {}

  void ApplyNode(const k8s::NodeObject& node);
  void DeleteNode(std::string_view name);
  // The pod as the model must see it; remembers bound GPU pods of DRA nodes, to re-apply them when
  // their claim changes. Apply the result with ClusterModel::ApplyPod (or the RequeueRule).
  k8s::PodObject Pod(const k8s::PodObject& pod);
  void ForgetPod(std::string_view uid);

  void ApplyDeviceClass(const k8s::DeviceClassObject& c);
  void DeleteDeviceClass(std::string_view name);
  void ApplyResourceSlice(const k8s::ResourceSliceObject& s);
  void DeleteResourceSlice(std::string_view name);
  // Both return the nodes where the claim's change freed GPUs (its allocation went, moved or shrank),
  // for RequeueRule::Freed; none when it freed nothing.
  std::vector<std::string> ApplyResourceClaim(const k8s::ResourceClaimObject& c);
  std::vector<std::string> DeleteResourceClaim(std::string_view uid);

  // What the pod asks of DRA GPUs through its own claims or an implicit extended resource name, per
  // DRA node (dra_pod_ask.h); null when it asks none, or what it asks cannot be predicted.
  std::shared_ptr<const DraPodAsk> AskOf(const k8s::PodObject& pod) const;
  // The GPUs of the pod's extended-resource claim, once allocated (bind reads it).
  std::optional<DraAllocation> AllocationOf(std::string_view pod_uid) const;
  // Why the GPU class admits no device ("" when it is read or there is none).
  std::string Warning() const;

 private:
  struct Claim {
    k8s::ResourceClaimObject object;
    std::string holder;                   // The holding's uid: the pod's, or kClaimHoldingPrefix + uid.
    std::optional<DraAllocation> allocation;
    bool synthetic = false;               // The model holds a holding made from the claim alone.
  };
  void RefreshNodeLocked(const std::string& name);
  void RefreshAllLocked();
  // Refreshes the claims with a result in (driver, pool).
  void RefreshPoolClaimsLocked(const std::pair<std::string, std::string>& pool);
  void IndexClaimLocked(const std::string& uid, const k8s::ResourceClaimObject* before, const k8s::ResourceClaimObject* after);
  // Re-reads the claim's allocation and tells the model (the pod's holding, or the claim's own).
  void RefreshClaimLocked(Claim& c);
  void ReleaseClaimLocked(Claim& c);
  k8s::PodObject AugmentLocked(const k8s::PodObject& pod) const;
  k8s::PodObject ClaimHolding(const Claim& c) const;

  ClusterModel& model_;
  mutable std::mutex mu_;
  DraInventory inventory_;
  std::map<std::string, k8s::NodeObject, std::less<>> nodes_;      // Nodes without nvidia.com/gpu allocatable.
  std::map<std::string, std::string, std::less<>> applied_;        // DRA node -> DraNodeGpus fingerprint applied.
  std::map<std::string, k8s::PodObject, std::less<>> pods_;        // Bound GPU pods of DRA-candidate nodes, by uid.
  std::map<std::string, Claim, std::less<>> claims_;               // By claim uid.
  std::map<std::string, std::string, std::less<>> claim_of_pod_;   // Pod uid -> its extended-resource claim's uid.
  std::map<std::pair<std::string, std::string>, std::string> claim_by_name_;
  std::vector<std::string> freed_;  // Nodes where RefreshClaimLocked freed GPUs, since last taken.  // (namespace, name) -> claim uid.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> claims_by_pool_;  // (driver, pool) -> claim uids.
};

}  // namespace topofit::cluster
