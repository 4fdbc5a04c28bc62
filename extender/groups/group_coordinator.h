#pragma once
// GroupCoordinator: a group of pods through kube-scheduler's one-pod-at-a-time verbs - held at filter
// until its members are there, planned in one step (GroupPlanner), reserved whole (GroupReservations),
// then each member led to its slot's node and bound with its slot's exact GPUs.
//
// Filter(pod), for a group member (GroupLookup::IsMember; a pod of no group gets member == false and is
// placed exactly as before):
//   1. the group has a live reservation: the member's slot (assigned by UID on its first filter, the
//      same one on every later call) - its node is the one node that passes;
//   2. else, fewer than min-count members seen (the model's group members: pending and bound):
//      held - "group train-7: 6 of 8 pods created";
//   3. else planned: members already bound (or whose bind took a slot) are fixed; the rest are planned
//      inside the deepest domain, at the group's level or broader, holding every fixed member (a
//      re-created member goes back to its group's rack; after a restart the bound members are learnt
//      from their annotations and only the rest is planned). A plan is reserved whole; a reservation
//      that lost a race with another bind is re-planned (kMaxPlanTries). No plan: held, with the
//      planner's reason ("group train-7: no block can take 8 members of 8 GPUs: ...").
//      Then, unless the member's preemptionPolicy is Never, it is planned again as if every pod of priority
//      below the group's (GroupSpec::priority) were gone (group_preemption.h): if that plan holds, the member is led to its slot there
//      (the i-th member waiting, by UID, gets the i-th slot) and `preempted` names the pods in its way;
//      it is planned freeing the lowest priorities first (PreemptibleGpus::tiers), the next only if none holds -
//      so that kube-scheduler's workload-aware preemption, whose trial runs topofit's filter on a
//      snapshot without those pods, finds the group a place, and deletes only pods on the plan's nodes.
//      Nothing is reserved: the member binds only once the group is planned on GPUs really free.
//   Planning is serialised (one group at a time), so two groups wanting the last domain never split
//   it: the first gets all of it, the second finds no room and waits whole. A planned group's other
//   pending members come back in `requeue` (the caller asks kube-scheduler to try them now), and so do
//   they when a complete group's reason changes (it has no plan: every member's event then says why);
//   a reason repeated requeues nobody, so members never bounce each other, and members arriving one by
//   one requeue nobody until the group is complete.
//   4. a slot kube-scheduler turned away: given `candidates` (the nodes kube-scheduler sent with the
//      filter call), a slot node missing from a list that SlotRefusals::SlotRefused says is complete -
//      shorter than kube-scheduler's minimum search, or of any length once the member's
//      nominatedNodeName is the slot's node - is refused (a taint, CPU or memory, a node selector, the
//      node NotReady). The group's slots not yet
//      handed over are given back (DropUnhanded) and the group planned again at once, around its fixed
//      members and without the refused node (left out of the group's plans for the TTL); at most
//      SlotRefusals::kMaxReplans such re-plans per TTL, then the slot is kept until the reservation
//      expires, the reason saying so. A member whose slot another member's re-plan dropped gets a new
//      slot on its next filter (a bind in flight to the old slot fails and kube-scheduler retries it).
//      Not a refusal: a list whose nodes are all in one domain of the group's level other than the
//      slot's (DomainTrial): kube-scheduler's TopologyAwareWorkloadScheduling filters a gang against
//      one domain at a time; the member is held for that domain, with no re-plan and no nomination,
//      and passes when the slot's domain is tried.
//   5. nomination: a member whose slot's node kube-scheduler did not send (its search may have stopped
//      before it) and is not its nominatedNodeName gets `nominate`, and the caller sets the field to
//      the slot's node. kube-scheduler then evaluates that node alone first on the member's next
//      attempt (whatever the cluster's size and percentageOfNodesToScore), counts the member's
//      resources as spoken for there, and a list without the node proves a refusal (step 4). A held
//      member with a nominatedNodeName gets it cleared, so that kube-scheduler holds nothing for it on
//      a node its group no longer reserves. A slot node that was sent is left alone: the member binds
//      there now, and kube-scheduler clears the field once it is bound.
// Bind(pod, node): the member's slot on `node` becomes its reservation (GroupReservations::HandOver);
//   the caller's bind path then Confirms or Releases it as any bind's, and calls Bound after its write.
// Groups(): every group seen, for GET /api/v1/groups, kubectl topofit groups and /metrics.
// Explain(pod): the group's verdict per domain, its plan or why not, for explain.
// Errors are reasons, never thrown; bad annotations hold the member with the annotation's error.
// Thread-safe.

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/cluster/group_reservations.h"
#include "extender/groups/domain_loss.h"
#include "extender/groups/domain_map_cache.h"
#include "extender/groups/group_lookup.h"
#include "extender/groups/group_planner.h"
#include "extender/groups/slot_refusals.h"
#include "extender/placement/pipeline.h"

namespace topofit::groups {

struct GroupVerdict {
  bool member = false;        // false: a pod of no group, nothing below applies.
  std::string key;            // "namespace/group"
  std::string node;           // The member's slot node; "" while it is held.
  GpuSet gpus;                // The slot's GPUs.
  std::string reason;         // Why it is held (what kube-scheduler's FailedScheduling event shows).
  std::string domain;         // The plan's domain (the deepest holding every member).
  bool planned_now = false;   // This call planned and reserved the group.
  double waited_seconds = 0;  // planned_now: from the first member seen to the plan.
  std::vector<cluster::GroupMember> requeue;  // planned_now: the other members waiting.
  std::string replanned;      // This call planned the group again: the slot node kube-scheduler turned away.
  bool nominate = false;      // The member's nominatedNodeName should be `node` ("" clearing it): step 5;
                              // the caller writes it (KubeWriter::NominatePod).
  // Non-empty: the group has no plan, and `node` and `gpus` are this member's slot only if kube-scheduler
  // preempts these pods ("namespace/name") - step 3's plan for workload-aware preemption. Nothing is
  // reserved and nobody nominated; `reason` says why the member waits.
  std::vector<std::string> preempted;
};

enum class GroupState : uint8_t { kWaiting, kPlanned, kBound };
std::string_view ToString(GroupState state);  // "waiting", "planned", "bound"

struct GroupStatus {
  std::string key;
  std::optional<GroupSpec> spec;  // As the last member filtered stated it.
  GroupState state = GroupState::kWaiting;
  int members_seen = 0;
  int members_bound = 0;
  std::string domain;
  std::string reason;             // Why it waits ("" when planned or bound).
  // Waiting: the victims kube-scheduler's workload-aware preemption would take for it, as its members
  // were last led (GroupVerdict::preempted: "namespace/pod", "PodGroup namespace/name"); empty when none.
  std::vector<std::string> preempting;
  std::vector<std::string> notes; // The plan's notes.
  double waiting_seconds = 0;     // Since its first member was seen, until planned (then: how long it took).
  // Its min-count members are there (as the coordinator's step 2 counts them): a waiting group that is
  // complete waits for room, one that is not waits for its controller.
  bool complete() const { return spec && members_seen >= spec->min_count; }
};

// One domain's verdict for a group's members, for explain.
struct DomainVerdict {
  std::string domain;
  int room = 0;       // Members it can take.
  int free_gpus = 0;
  bool fits = false;  // room >= the members planned.
};

struct GroupExplanation {
  GroupStatus status;
  std::string level;                     // The level compared ("block"); "" when none is named.
  std::vector<DomainVerdict> domains;    // At the group's level, best first (BestFitLess order).
  std::vector<MemberPlan> plan;          // The reservation's slots (or the plan it would make now).
  std::string slot_node;                 // This pod's slot, if it has one.
};

class GroupCoordinator {
 public:
  // At most this many plans per filter call when reserving loses a race.
  static constexpr int kMaxPlanTries = 3;
  // Groups kept in the status table (the least recently seen go first).
  static constexpr size_t kMaxGroups = 10000;

  // `pipeline` (its model and Placer) and `lookup` must outlive this.
  GroupCoordinator(placement::Pipeline& pipeline, const GroupLookup& lookup,
                   cluster::Duration ttl = cluster::GroupReservations::kTtl);

  bool IsMember(const cluster::PodRequest& pod) const { return lookup_.IsMember(pod); }
  // `candidates`: the nodes kube-scheduler sent (step 4); nullopt: not known, no slot is judged refused.
  GroupVerdict Filter(const cluster::PodRequest& pod,
                      std::optional<std::span<const std::string_view>> candidates = std::nullopt);
  // The member's slot, without assigning one (prioritize).
  std::optional<cluster::GroupSlot> SlotOf(const cluster::PodRequest& pod) const;
  Result<GpuSet> Bind(const cluster::PodRequest& pod, std::string_view node);
  // After the bind's API write succeeded: the member counts as bound on `node` before the watch says so
  // (and without a watch, in snapshot mode).
  void Bound(const cluster::PodRequest& pod, std::string_view node);
  std::vector<GroupStatus> Groups() const;
  std::optional<GroupExplanation> Explain(const cluster::PodRequest& pod) const;

  const GroupLookup& lookup() const { return lookup_; }
  cluster::GroupReservations& reservations() { return reservations_; }
  // Keeps pods of no group off the domains the groups planned so far will need (domain_loss.h): the
  // caller hands it to the pipeline (Pipeline::SetBandLoss).
  const placement::BandLoss& domain_loss() const { return domain_loss_; }

 private:
  // A group's last plan that failed - and, once asked, its plan if kube-scheduler preempted
  // (PlanIfPreempted) - kept while the model's GPUs and nodes and what they were made from are
  // unchanged: kube-scheduler v1.36.3 retries a gang that does not fit without backoff while its queue
  // is otherwise empty (every member's filter, again and again), and asks for the same preemption
  // trial once per victim it gives back. Recalled for at most kRecallFor: a reservation past its expiry
  // frees its GPUs only when a reader sweeps it, which changes no generation before then. Under
  // plan_mu_; cleared past kMaxGroups entries.
  static constexpr cluster::Duration kRecallFor = std::chrono::seconds(1);
  struct Unplanned {
    cluster::TimePoint made{};
    uint64_t gpu_generation = 0, node_generation = 0;
    GroupSpec spec;
    std::vector<std::string> fixed_nodes, excluded;
    std::string reason;  // Why the free GPUs hold no plan.
    bool preemption_planned = false;
    GroupPlan if_preempted;
    std::string if_preempted_domain;
    std::vector<std::string> preempted;
  };
  // The group's plan on the free GPUs into `plan` and `domain` (nullptr back), or, when there is none,
  // its Unplanned: the one kept while it still holds, else a new one (PlanRest is not asked again).
  Unplanned* PlanOrRecall(const std::string& key, const GroupSpec& spec, const std::vector<std::string>& fixed_nodes,
                          GroupPlan& plan, std::string& domain);
  struct Tracked {
    std::optional<GroupSpec> spec;
    cluster::TimePoint first_seen{};
    cluster::TimePoint last_seen{};
    std::optional<cluster::TimePoint> planned_at;
    std::string domain;
    std::string reason;
    std::vector<std::string> notes;
    std::vector<std::string> preempting;  // The last verdict's GroupVerdict::preempted.
  };
  // The member's slot of a live reservation (assigning one); nullopt when there is none to have.
  std::optional<cluster::GroupSlot> SlotFor(const std::string& key, const cluster::PodRequest& pod);
  // Steps 2 and 3 of Filter, under plan_mu_; `before`: the group's reason before this call.
  void PlanWaiting(const GroupSpec& spec, const cluster::PodRequest& pod, const std::string& before, GroupVerdict& v);
  void PlanGroup(const GroupSpec& spec, const cluster::PodRequest& pod, GroupVerdict& out);
  // Step 4, under plan_mu_: `slot`'s node was turned away by kube-scheduler.
  void ReplanRefused(const GroupSpec& spec, const cluster::PodRequest& pod, const cluster::GroupSlot& slot,
                     GroupVerdict& v);
  // The members to plan now, inside the domain of the fixed ones and off the `excluded` nodes: a plan
  // or why not; `domain`: the deepest domain holding the fixed members and the plan's ("block s1/b2").
  // `nodes`: the nodes to plan on, with their map (PreemptibleGpus::IfPreempted); nullptr: as the
  // model has them now.
  GroupPlan PlanRest(const GroupSpec& spec, const std::vector<std::string>& fixed_nodes,
                     const std::vector<std::string>& excluded, std::string* domain,
                     const GroupNodes* nodes = nullptr) const;
  // Step 3's plan if kube-scheduler preempted the pods of priority below spec.priority (made once per
  // `u`): fills v's node, gpus, preempted and the end of its reason, or leaves v alone. `waiting`: the
  // UIDs of the members to place. Under plan_mu_.
  void PlanIfPreempted(Unplanned& u, const cluster::PodRequest& pod, std::vector<std::string> waiting,
                       GroupVerdict& v);
  // Why `candidates` prove nothing about `slot_node`, or "": every candidate is in one domain of the
  // group's level other than the slot node's - kube-scheduler's topology-aware workload scheduling
  // (v1.36, alpha) filtering the group's members against one domain at a time.
  std::string DomainTrial(const GroupSpec& spec, const std::string& slot_node,
                          std::span<const std::string_view> candidates) const;
  // The group's reason before this call ("" when none), for requeueing its members when it changes.
  std::string LastReason(const std::string& key) const;
  // Records the verdict in the status table.
  void Track(const std::string& key, const std::optional<GroupSpec>& spec, const GroupVerdict& v);
  double WaitedSeconds(const std::string& key) const;

  placement::Pipeline& pipeline_;
  const GroupLookup& lookup_;
  GroupShapeEstimate expected_;  // The groups planned: the shapes DomainFragmentationScore keeps room for.
  DomainMapCache maps_;          // The domains of the model's nodes, rebuilt when they change.
  DomainLoss domain_loss_;
  GroupPlanner planner_;
  cluster::GroupReservations reservations_;
  SlotRefusals refusals_;
  std::map<std::string, Unplanned, std::less<>> unplanned_;
  std::mutex plan_mu_;  // One group planned at a time; taken before reservations_' and the model's locks.
  mutable std::mutex status_mu_;  // A leaf.
  std::map<std::string, Tracked, std::less<>> status_;
};

}  // namespace topofit::groups
