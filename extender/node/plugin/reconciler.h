#pragma once
// The reconciler's decisions, as pure functions over kubelet's truth (PodResources List) and the pod
// cache; the service (node_service.h) runs them off every RPC path and publishes through an
// ActualPublisher.
//
// ComputeActuals: one report per pod in `truth` that holds devices of the resource, named by UID
// through the pod cache by namespace/name (a pod not deleting first: a re-created pod of the same
// name is the new one); pods the cache does not know (static pods, a cache behind) are skipped.
// `actual` has the plan's shape (plan.h) with kubelet's IDs per container. A report is a mismatch
// when the pod has a plan for this node and a planned container holds other devices than planned
// (order ignored); `detail` then says which, e.g. "trainer: planned GPU-a,GPU-b, holds GPU-a,GPU-c".
// NeedsPublish: the pod's topofit.io/gpu-actual differs from `actual` in node or containers (the
// time is not compared).
// UnhealthyOf: the IDs of the devices the backend reports not Healthy, sorted.
//
// Pods kubelet has finished (docs/node.md, "Pods kubelet has finished"). Kubelet's PodResources Get
// answers for every pod of its pod manager, ended and rejected ones too, and says their containers
// hold nothing once kubelet has freed their devices - what it also says of the pod it is admitting.
// List reports only kubelet's active pods (KubeletPodResourcesListUseActivePods, on by default since
// 1.34), and kubelet adds a pod to its pod manager before it admits it, where it stays active until
// it is terminal. So a pod that a Get answered, and that a List sent after that answer leaves out,
// has been ended or rejected by kubelet, whatever its phase in the pod cache says yet.
// PodsToAsk: after a List, the pods worth a Get: a usable plan on `node`, not ended, left out by
// `listed` (the List's pods), with a next GPU container (one the matcher could pick); the least
// recently asked first (`last_asked`: uid -> the reconcile that last asked; never asked: first), then
// by creation; at most `max`.
// EndedPods: the UIDs of `asked` whose view says kubelet knows them (not kNotFound, not kUnknown)
// and that `later` (a List sent after those answers) leaves out. Both pure; `pods` resolve names.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/node/plugin/ledger.h"
#include "extender/node/plugin/plan.h"
#include "extender/node/plugin/podresources_client.h"

namespace topofit::node {

using k8s::kGpuHealthAnnotation;  // node
inline constexpr const char* kReasonMismatch = "TopofitGpuSetMismatch";

struct ActualReport {
  const NodePod* pod = nullptr;
  GpuAssignment actual;
  bool mismatch = false;
  std::string detail;
};

std::vector<ActualReport> ComputeActuals(std::string_view node, const std::vector<NodePod>& pods,
                                         const std::vector<PodDevices>& truth, int64_t unix_seconds);
bool NeedsPublish(const ActualReport& report);

std::vector<const NodePod*> PodsToAsk(std::string_view node, const std::vector<NodePod>& pods, const Ledger& ledger,
                                      const std::vector<PodDevices>& listed,
                                      const std::map<std::string, uint64_t>& last_asked, size_t max);
std::vector<std::string> EndedPods(const std::vector<const NodePod*>& asked, const std::vector<KubeletView>& views,
                                   const std::vector<PodDevices>& later);

// k8s::EncodeGpuHealth of `unhealthy` sorted: {"v":1,"unhealthy":["GPU-..."],"t":<unix seconds>}
std::string EncodeGpuHealth(const std::vector<std::string>& unhealthy, int64_t unix_seconds);

// Where the reconciler's results go: the API server in production (KubeActualPublisher), a
// recording fake in tests. Contract per method: PatchPod sets exactly `annotations` on the pod
// with that UID (a pod re-created under the name is not touched: an error); PodEvent records a
// core/v1 Event on the pod (best effort); PatchNode sets exactly `annotations` on the Node.
class ActualPublisher {
 public:
  virtual ~ActualPublisher() = default;
  virtual Status PatchPod(const NodePod& pod, const std::map<std::string, std::string>& annotations) = 0;
  virtual void PodEvent(const NodePod& pod, const std::string& type, const std::string& reason,
                        const std::string& message) = 0;
  virtual Status PatchNode(const std::string& node, const std::map<std::string, std::string>& annotations) = 0;
};

}  // namespace topofit::node
