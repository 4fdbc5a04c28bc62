// ExtenderVerbs for the members of a group of pods (extender_verbs.h, extender/groups/group_coordinator.h):
// held or led to their slot's node at filter, scored at prioritize, and the bind event naming the domain.
#include <fmt/format.h>

#include <chrono>

#include "base/log.h"
#include "extender/protocol/replies.h"
#include "extender/server/extender_verbs.h"

namespace topofit::server {

bool ExtenderVerbs::IsGroupMember(const cluster::PodRequest& pod) const {
  return groups_ && pod.wants_gpus() && groups_->IsMember(pod);
}

Reply ExtenderVerbs::GroupFilter(const protocol::ExtenderArgs& args, const cluster::PodRequest& pod,
                                 std::span<const std::string_view> names) {
  const auto start = std::chrono::steady_clock::now();
  groups::GroupVerdict v = groups_->Filter(pod, names);
  placement::FilterOutcome outcome;
  bool listed = false;
  for (std::string_view n : names) listed |= !v.node.empty() && n == v.node;
  // Listed: the slot's node passes, every other node is not this member's. Else the coordinator's
  // reason: why it waits, or why its slot's node (not sent) is kept.
  const std::string refused = listed && v.preempted.empty()
                                  ? fmt::format("group {}: this member's GPUs are reserved on node {}", pod.group, v.node)
                                  : v.reason;
  for (uint32_t i = 0; i < names.size(); ++i) {
    if (listed && names[i] == v.node) {
      outcome.passed.push_back(i);
    } else {
      outcome.unresolvable.push_back({i, refused});  // Preemption cannot help a group wait.
    }
  }
  if (v.nominate) {
    writer_->NominatePod(pod.namespace_, pod.name, pod.uid, v.node);
    // kube-scheduler does not requeue a pod for a change of its status alone; an annotation does, and
    // it is written after the nomination (one queue), so the next attempt judges the slot's node first.
    if (!v.node.empty()) writer_->RequeuePod(pod.namespace_, pod.name, pod.uid);
  }
  for (const cluster::GroupMember& m : v.requeue) {
    writer_->RequeuePod(pod.namespace_, m.name, m.uid);
    if (metrics_) metrics_->CountRequeue();
  }
  if (metrics_) {
    if (v.planned_now) metrics_->ObserveGroupPlaced(v.waited_seconds);
    metrics_->CountDecision(Verb::kFilter, "passed", outcome.passed.size());
    metrics_->CountDecision(Verb::kFilter, "unresolvable", outcome.unresolvable.size());
  }
  if (log_) {
    LogFields f = {{"verb", "filter"}, {"pod", pod.key()}, {"group", v.key}, {"gpus", std::to_string(pod.gpus)},
                   {"nodes", std::to_string(names.size())}, {"node", v.node}};
    if (!v.reason.empty()) f.push_back({"held", v.reason});
    if (!v.replanned.empty()) f.push_back({"refused_slot_node", v.replanned});
    if (v.planned_now) f.push_back({"planned", v.domain});
    if (!v.preempted.empty()) f.push_back({"if_preempted", std::to_string(v.preempted.size())});
    if (!v.requeue.empty()) f.push_back({"requeued", std::to_string(v.requeue.size())});
    f.push_back({"took_us", std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::steady_clock::now() - start).count())});
    Log(LogLevel::kInfo, "decision", f);
  }
  return Reply{200, FilterReply(args, names, outcome)};
}

std::vector<placement::NodeScore> ExtenderVerbs::GroupScores(const cluster::PodRequest& pod,
                                                             std::span<const std::string_view> names) const {
  const auto slot = groups_->SlotOf(pod);
  std::vector<placement::NodeScore> scores;
  scores.reserve(names.size());
  for (uint32_t i = 0; i < names.size(); ++i) scores.push_back({i, slot && names[i] == slot->node ? 10 : 0});
  return scores;
}

std::string ExtenderVerbs::GroupBoundMessage(const cluster::PodRequest& pod, const std::string& node,
                                             GpuSet gpus) const {
  const std::string key = pod.group_key();
  for (const groups::GroupStatus& s : groups_->Groups()) {
    if (s.key != key) continue;
    return fmt::format("GPUs {} on {}: a member of group {} ({} members), planned whole in {}", gpus.ToString(), node,
                       pod.group, s.spec ? s.spec->size : 0, s.domain.empty() ? "the cluster" : s.domain);
  }
  return fmt::format("GPUs {} on {}: a member of group {}", gpus.ToString(), node, pod.group);
}

}  // namespace topofit::server
