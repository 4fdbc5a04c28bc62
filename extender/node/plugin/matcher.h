#pragma once
// The matcher: which planned container kubelet is admitting when it asks GetPreferredAllocation,
// and what to answer - pure functions over the pods on this node, the ledger and the request (no
// I/O: the front plugin makes the PodResources Get calls and the backend call between the steps).
//
// Kubelet's request names no pod (docs/kubelet-contracts.md §3): {available A, must_include M, size k},
// one container per call, the container's full request as k. The steps:
//  1. FindCandidates. A planned container is a candidate when its pod is on `node` (spec.nodeName
//     and the plan's node both), not terminal, not deleting, not ended by kubelet (Ledger::Ended:
//     its final phase may not have reached the pod cache, and PodResources Get still answers for
//     it); it is the pod's next GPU container in
//     kubelet's order (init containers first, spec order): the one after the last the ledger has
//     seen allocated (kubelet's List never reports regular init containers);
//     its planned set S has |S| = k and M is a subset of S. Then it is `exact` when S is within A + M
//     (kubelet's own word that those GPUs are free: the ledger is not asked), else `partial` (a planned
//     GPU is unhealthy, still held by a terminating pod, or taken by a foreign pod).
//  2. Ask kubelet (PodResources Get, `views`) about the candidates, exact ones first, each list in
//     the order of step 3, in waves asked together - the first candidate alone, then at most
//     kViewWave at a time - and stop after the first wave with a candidate kubelet is admitting (it
//     knows the pod and this container holds no devices yet): kubelet admits one pod at a time and
//     adds it to its pod manager just before, so that one is the pod (the earliest in this order if
//     several say so). When none is: drop those kubelet does not know or that already hold
//     devices, and keep those it could not be asked about (kUnknown).
//  3. Decide. One exact candidate or more left: the earliest (creationTimestamp, then plan time, then
//     namespace/name, as kubelet sorts a batch), answer S; `tentative` when more than one remained.
//     No exact candidate but partial ones: the earliest partial keeps S within A + M (M first) and
//     asks the backend for the rest. No candidate: ask the backend, offering A less every GPU planned
//     for other pending containers when that still leaves k (M always offered), else A.
//  4. Complete merges the backend's answer: only IDs in A + M, M first, no repeats, at most k; the
//     shortfall is filled from the offered set in its order (the backend failed or answered short).
//     GetPreferredAllocation therefore always has an answer and never an error.
// IdentifyAllocation names the holder of an Allocate's devices D. `pending` is the Decision of the
// GetPreferredAllocation call just before, not yet consumed by an Allocate (kubelet calls the two
// in turn per container): its container when its size matches (nobody when it was unplanned),
// whether or not kubelet followed it. Without one, kubelet asked nothing because the container
// took all it needs from its pod's init container: the next container of `previous` (the holder of
// the Allocate just before; nobody if that was nobody). With neither (after a restart), the pending
// planned container whose S equals D (unique: the extender keeps pending plans disjoint), else nobody.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/node/plugin/ledger.h"
#include "extender/node/plugin/plan.h"

namespace topofit::node {

struct PreferredRequest {
  DeviceList available;
  DeviceList must_include;
  int size = 0;
};

struct Candidate {
  const NodePod* pod = nullptr;
  std::string container;
  DeviceList planned;
};

struct Candidates {
  std::vector<Candidate> exact;
  std::vector<Candidate> partial;
};

Candidates FindCandidates(std::string_view node, const std::vector<NodePod>& pods, const Ledger& ledger,
                          const PreferredRequest& request);

// What kubelet's PodResources Get says about a candidate's pod.
enum class KubeletView {
  kUnknown,     // Get failed or timed out: no information.
  kNotFound,    // Kubelet does not know the pod (not being admitted yet), or it is terminated.
  kAdmitting,   // Known, and this container holds no devices of the resource yet.
  kHasDevices,  // Known, and this container already holds devices: it is not being admitted.
};

// Keeps the candidates kubelet is admitting if any, else those with an unknown view (step 2).
// `views[i]` is the view of `candidates[i]`.
std::vector<Candidate> Narrow(std::vector<Candidate> candidates, const std::vector<KubeletView>& views);

struct Decision {
  enum class Kind { kPlanned, kPartial, kUnplanned };
  Kind kind = Kind::kUnplanned;
  DeviceList answer;         // kPlanned: the reply. kPartial: the part of the plan kept.
  PreferredRequest backend;  // kPartial, kUnplanned: what to ask the backend.
  std::string pod_uid;       // kPlanned, kPartial: who.
  std::string pod_key;       // namespace/name, for logs.
  std::string container;
  int size = 0;              // The request's size.
  bool tentative = false;    // More than one candidate was left: chosen by creation order.
};

Decision Decide(const PreferredRequest& request, const std::vector<Candidate>& exact,
                const std::vector<Candidate>& partial, const std::vector<NodePod>& pods,
                const Ledger& ledger, std::string_view node);

// The reply: `decision.answer` (kPlanned) or the decision's part merged with the backend's answer
// (nullopt when the backend failed or was not asked), as step 4 says.
DeviceList Complete(const PreferredRequest& request, const Decision& decision,
                    const std::optional<DeviceList>& backend_answer);

// Step 2's waves. The first is the earliest candidate alone: kubelet admits a delivery in creation
// order, so it is the likeliest, and then one Get is all an admission spends, as when asking one
// by one. Later waves hold at most half of the burst of kubelet's PodResources rate limit (a token
// bucket shared by every client of the socket: 100 per second, burst 10), so that one admission's
// Gets leave the other half to the reconciler's List and to other PodResources clients on the node
// (monitoring agents), and a wave never waits for a token while the bucket is full.
inline constexpr int kViewWave = 5;

// Steps 1 to 4 in one: `views` (may be empty: no PodResources) is asked in step 2, `backend` only
// for kPartial and kUnplanned (nullopt: it failed). Both may do I/O; Match itself does none.
struct MatchResult {
  DeviceList reply;
  Decision decision;
  int candidates = 0;  // Exact and partial candidates before step 2.
  int asked = 0;       // Views asked for.
  int unknown = 0;     // Of those, kUnknown (Get failed, timed out, or rate-limited past its deadline).
};
// The views of one wave of candidates, one per candidate in its order (asked together).
using ViewsFn = std::function<std::vector<KubeletView>(const std::vector<const Candidate*>& wave)>;
// One candidate's view; OneByOne asks a wave's candidates in turn (pure callers and tests).
using ViewFn = std::function<KubeletView(const NodePod& pod, const std::string& container)>;
ViewsFn OneByOne(ViewFn view);
using BackendFn = std::function<std::optional<DeviceList>(const PreferredRequest& request)>;
MatchResult Match(const PreferredRequest& request, std::string_view node, const std::vector<NodePod>& pods,
                  const Ledger& ledger, const ViewsFn& views, const BackendFn& backend);

struct Holder {
  std::string pod_uid;  // Empty: not identified.
  std::string container;
  bool planned = false;  // D is the container's plan (HoldsAsPlanned, plan.h).
};

Holder IdentifyAllocation(const DeviceList& devices, std::string_view node, const std::vector<NodePod>& pods,
                          const Ledger& ledger, const std::optional<Decision>& pending,
                          const std::optional<Holder>& previous);

// The pod's next GPU container in kubelet's order (init containers first, spec order): the one after
// the last the ledger has seen allocated; nullptr when there is none.
const GpuContainer* NextContainer(const NodePod& pod, const Ledger& ledger);

// The plan for a pod on `node` the matcher may follow: spec.nodeName and the plan's node both
// `node`, the pod neither terminal nor deleting. nullptr otherwise.
const GpuAssignment* UsablePlan(const NodePod& pod, std::string_view node);

}  // namespace topofit::node
