#pragma once
// The reconciler's decisions, as pure functions over kubelet's truth (PodResources List) and the pod
// cache; the service (node_service.h) runs them off every RPC path and publishes through an
// ActualPublisher.
//
// PodsByKey: the pod cache by namespace/name, a pod not deleting first (a re-created pod of the
// same name is the new one) - how kubelet's PodResources answers, which name no UID, are read.
// WithInitHoldings: `list` with each listed pod's regular init containers added, in the pod's
// container order, as kubelet holds them. PodResources never reports a regular init container, yet
// kubelet keeps its devices allocated to the pod until the pod ends (the app containers reuse some
// of them; the rest go to nobody else: docs/node.md, "Init containers with more GPUs than the
// app"). The IDs are those of its Allocate as the ledger recorded them (kubelet's own), else those
// of the pod's last published gpu-actual (after a restart of topofit node); with neither, left out.
// ComputeActuals: one report per pod in `truth` that holds devices of the resource, named by UID
// through PodsByKey; pods the cache does not know (static pods, a cache behind) are skipped.
// `actual` has the plan's shape (plan.h) with kubelet's IDs per container. A report is a mismatch
// when the pod has a plan for this node and a planned container does not hold its plan
// (HoldsAsPlanned, plan.h); `detail` then says which, e.g. "trainer: planned GPU-a,GPU-b, holds
// GPU-a,GPU-c".
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

std::map<std::string, const NodePod*> PodsByKey(const std::vector<NodePod>& pods);
std::vector<PodDevices> WithInitHoldings(const std::vector<NodePod>& pods, const Ledger& ledger,
                                         std::vector<PodDevices> list);
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
