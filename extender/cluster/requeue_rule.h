#pragma once
// RequeueRule: THE rule for trying again a pod topofit turned away for want of free GPUs, in one place.
//
// Why (capacity_waits.h says it at length): kube-scheduler and topofit learn of a pod's end separately;
// when kube-scheduler learns first and tries a waiting pod at once, topofit, still counting the pod that
// went, turns it away, and nothing would try the pod again until an unrelated event or the 5-minute flush.
//
// The rule:
//   TurnedAway  after filter: a GPU pod that passed no node, and failed on some for want of free GPUs
//               (too few, or no free set meeting its policy: failures preemption could resolve, so on
//               nodes whose GPU count kube-scheduler's own filter passed), waits on those nodes.
//   ApplyPod,   a watch delivery: applied to the model; when it frees the GPUs a pod held on a node (the
//   DeletePod   pod went, left the node, or holds none now), the pods waiting on that node that want no
//               more GPUs than are free there now are returned, each once (then forgotten everywhere).
//               The caller asks kube-scheduler to try them again (KubeWriter::RequeuePod).
//   Freed       GPUs freed on a node otherwise: a DRA claim's allocation went (the claims of pods on DRA
//               nodes, users' claims); the same answer.
// A bind or deletion of a waiting pod ends its wait (ClusterModel forgets it). Nothing is looked up while
// no pod waits. Not an error: a pod with no uid, a node that no longer exists (nothing to requeue).
// Thread-safe as ClusterModel and CapacityWaits are.

#include <string>
#include <string_view>
#include <vector>

#include "extender/cluster/capacity_waits.h"
#include "extender/cluster/cluster_model.h"
#include "extender/cluster/pod_intent.h"
#include "extender/k8s/objects.h"

namespace topofit::cluster {

struct Requeue {
  WaitingPod pod;
  std::string node;  // Where GPUs were freed.
};

class RequeueRule {
 public:
  explicit RequeueRule(ClusterModel& model) : model_(model) {}

  // After a filter that passed no node: `capacity_failed`, the nodes the pod failed on for want of free
  // GPUs (none: nothing is noted).
  void TurnedAway(const PodRequest& pod, const std::vector<std::string>& capacity_failed);
  std::vector<Requeue> ApplyPod(const k8s::PodObject& pod);
  std::vector<Requeue> DeletePod(std::string_view uid);
  // After GPUs were freed on `node` by other means (a DRA claim's allocation went: DraCluster's
  // ApplyResourceClaim, DeleteResourceClaim): the waiting pods that now fit there.
  std::vector<Requeue> Freed(const std::string& node);

 private:
  // The node `uid` holds GPUs on while pods wait for GPUs; "" otherwise.
  std::string HolderNode(std::string_view uid) const;

  ClusterModel& model_;
};

}  // namespace topofit::cluster
