#pragma once
// ExtenderVerbs: kube-scheduler's four extender verbs, and a second prioritize, as one plain function
// from verb and request body to Reply (Handle), over the placement pipeline. No HTTP here
// (http_server.h routes to it), so tests and the bench can call it directly.
//
// Wire contract (docs/extender-protocol.md): PascalCase keys out, any case in; every handled
// call of filter and bind answers 200 with a JSON body, errors in "Error"; filter's FailedNodes and
// FailedAndUnresolvableNodes are filled only when no node passed (FilterReply); prioritize, preempt and
// prioritize-pods-without-gpus answer malformed requests with 400 and {"error": "..."}. Unused fields
// are null. Integers are JSON integers. Malformed input never changes the model.
//
// prioritize-pods-without-gpus: the prioritize verb of a second extender entry that has no
// managedResources, so kube-scheduler sends it every pod of the profile (manifests/base/
// scheduler-config.yaml). A pod asking for GPUs answers [] at once, no node scored (the main entry's
// filter places it); a pod asking for none is scored as Pipeline::Prioritize scores it with
// score_pods_without_gpus on (FragmentationGradient: where its CPU and memory leave the fewest GPUs
// unusable), whatever scoring.podsWithoutGpus says. A pod that asks DRA GPUs through its own
// ResourceClaims (or deviceclass.resource.kubernetes.io/<class>) is scored as a GPU pod by the set
// the allocator will give it on each DRA node (DraCluster::AskOf, docs/dra.md); kube-scheduler's DRA
// plugin filters and its binder binds it.
//
// bind: reserve the set under the node's lock (Pipeline::ReserveBest), create the Binding carrying
// topofit.io/gpu-ids and topofit.io/placement (one write: the pod is bound and annotated together or
// not at all), then Confirm; any failure Releases the reservation. The same words go into a
// GPUsAssigned Event only where BindEvents says (a second write per pod, docs/throughput.md).
//
// filter: a pod turned away on every node, on some for want of free GPUs (a resolvable failure),
// waits on those in the model's CapacityWaits until the live watch sees GPUs freed there; bind ends
// the wait.
//
// Groups of pods (SetGroups; extender/groups/group_coordinator.h, docs/groups.md): a member pod
// (topofit.io/group) is held at filter - every node refused as unresolvable, with the group's reason -
// until its group is planned and reserved whole; then filter passes only its slot's node, prioritize
// scores that node 10 and the rest 0, and bind binds it with its slot's GPUs (the same annotations as any
// bind). When a filter plans a group, its other waiting members are requeued (KubeWriter::RequeuePod).
// A pod of no group takes exactly the paths above.
//
// Every decision logs one line (msg="decision" verb=...) through base/log.h. Thread-safe.

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/cluster/dra_cluster.h"
#include "extender/groups/group_coordinator.h"
#include "extender/k8s/kube_writer.h"
#include "extender/placement/dra_prediction.h"
#include "extender/placement/explain.h"
#include "extender/placement/pipeline.h"
#include "extender/protocol/extender_args.h"
#include "extender/server/metrics.h"
#include "extender/server/recorder.h"
#include "extender/server/reply.h"

namespace topofit::server {

// Which binds also record a GPUsAssigned Event on the pod (topofit.io/placement carries its words
// on every bind). kNotable: group members (the event names the domain) and pods on DRA nodes (it says
// whether the claim got the predicted GPUs); kAll: every bind.
enum class BindEvents { kNotable, kAll };
std::string_view ToString(BindEvents e);
// "notable" or "all"; nullopt for anything else.
std::optional<BindEvents> ParseBindEvents(std::string_view text);

class ExtenderVerbs {
 public:
  // All pointers must outlive this object; recorder may be null.
  ExtenderVerbs(placement::Pipeline* pipeline, k8s::KubeWriter* writer, Metrics* metrics, Recorder* recorder,
                bool log_decisions = true);

  // The reply of a verb whose body was refused before decoding (e.g. over the size limit).
  static Reply Refused(Verb verb, std::string_view message);
  // Dispatches by verb and takes care of metrics and recording. body_padded: at least
  // protocol::kJsonPadding readable bytes follow the body (HttpListener's bodies), so filter and
  // prioritize parse it in place.
  Reply Handle(Verb verb, std::string_view body, bool body_padded = false);

  // When on, full-node filter and prioritize calls add the Nodes the model does not know (decoded from the
  // request) to the model. For snapshot mode, where no watch keeps the nodes current; off in live
  // mode, where the watch is the truth (a node the scheduler still lists after its deletion must not
  // come back). Off by default.
  void SetLearnNodes(bool on) { learn_nodes_.store(on, std::memory_order_relaxed); }
  // Set before serving; null (the default): no groups, every pod is placed alone. Must outlive this.
  void SetGroups(groups::GroupCoordinator* groups) { groups_ = groups; }
  // Where bind reads a pod's DRA claim (docs/dra.md): on a DRA node it waits up to `claim_wait` for
  // the claim kube-scheduler allocated in PreBind to reach the model, and says in the GPUsAssigned
  // event whether it got the GPUs topofit predicted. Null (the default): bind does not wait.
  void SetDra(const cluster::DraCluster* dra, std::chrono::milliseconds claim_wait = std::chrono::seconds(2)) {
    dra_ = dra;
    claim_wait_ = claim_wait;
  }
  // Set before serving; kNotable by default.
  void SetBindEvents(BindEvents events) { bind_events_ = events; }

 private:
  Reply FilterImpl(std::string_view body, bool padded);
  // The filter reply: the passed nodes; the failed ones with their reasons only when none passed.
  // kube-scheduler reads an extender's failures only to explain a pod no node fits (statuses for its
  // FailedScheduling event and preemption; v1.36.3 schedule_one.go:892-936, extender.go:295-305) and
  // drops a node the reply neither passes nor fails, so with one node passed they are ~30 KB of JSON
  // per pod at 500 nodes for it to decode and discard (docs/throughput.md).
  static std::string FilterReply(const protocol::ExtenderArgs& args, std::span<const std::string_view> names,
                                 const placement::FilterOutcome& outcome);
  // without_gpus: the prioritize-pods-without-gpus verb.
  Reply PrioritizeImpl(std::string_view body, bool padded, bool without_gpus);
  Reply BindImpl(std::string_view body);
  // What bind writes with the Binding: gpu-ids, and the per-container plan by UUID for the node side
  // where it can be made (else index-only, gpu-ids alone, and `plan_note` says why).
  std::map<std::string, std::string> BindAnnotations(const cluster::PodRequest& pod, const std::string& node,
                                                     GpuSet gpus, std::string& plan_note) const;
  // Where a pod of no group went and why, in words (topofit.io/placement, GPUsAssigned); "" when the
  // node was not explained.
  static std::string BindSummary(const placement::Explanation& why, const placement::DraBindView& dra, GpuSet gpus);
  // After the Binding is written: the reservation confirmed, the pod no longer pending or waiting.
  void Bound(const protocol::BindingArgs& args, const cluster::PodRequest& pod, bool member);
  // The DRA view of a bind (dra_prediction.h), after waiting for the pod's claim on a DRA node.
  placement::DraBindView DraView(const cluster::PodRequest& pod, const std::string& node) const;
  Reply PreemptImpl(std::string_view body);
  // Decodes filter/prioritize args; with SetLearnNodes, applies the request's unknown Nodes.
  Result<protocol::ExtenderArgs> DecodeArgs(std::string_view body, bool padded);

  // Group members (group_verbs.cc).
  bool IsGroupMember(const cluster::PodRequest& pod) const;
  Reply GroupFilter(const protocol::ExtenderArgs& args, const cluster::PodRequest& pod,
                    std::span<const std::string_view> names);
  std::vector<placement::NodeScore> GroupScores(const cluster::PodRequest& pod,
                                                std::span<const std::string_view> names) const;
  std::string GroupBoundMessage(const cluster::PodRequest& pod, const std::string& node, GpuSet gpus) const;

  placement::Pipeline* pipeline_;
  k8s::KubeWriter* writer_;
  Metrics* metrics_;
  Recorder* recorder_;
  bool log_;
  std::atomic<bool> learn_nodes_{false};
  groups::GroupCoordinator* groups_ = nullptr;
  const cluster::DraCluster* dra_ = nullptr;
  std::chrono::milliseconds claim_wait_{0};
  BindEvents bind_events_ = BindEvents::kNotable;
};

}  // namespace topofit::server
