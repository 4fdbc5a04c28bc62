// The verbs. Hot path (filter/prioritize over 5,000 names): one DOM parse, one pipeline call, one
// reply encoded by extender/protocol/replies.h - no JSON library on the way out.
#include "extender/server/extender_verbs.h"

#include <thread>

#include <fmt/format.h>

#include <chrono>

#include "base/log.h"
#include "extender/cluster/requeue_rule.h"
#include "extender/k8s/gpu_plan.h"
#include "extender/k8s/topofit_annotations.h"
#include "extender/placement/container_plan.h"
#include "extender/placement/explain.h"
#include "extender/placement/preemption.h"
#include "extender/protocol/extender_args.h"
#include "extender/protocol/replies.h"

namespace topofit::server {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MicrosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

// One line per decision: msg=decision verb=VERB and the decision's fields.
void LogDecision(LogLevel level, std::string_view verb, LogFields fields) {
  fields.insert(fields.begin(), {"verb", std::string(verb)});
  Log(level, "decision", fields);
}

// The nodes a filter or prioritize call asks about. Node-cache mode names them; full-node mode sends
// Node objects (their names go into `full_names`). Upstream fills one of the two; when both come
// (the canonical test encoding), NodeNames decides.
const std::vector<std::string_view>& RequestNames(const protocol::ExtenderArgs& args,
                                                  std::vector<std::string_view>& full_names) {
  if (args.node_names) return *args.node_names;
  if (!args.nodes) return full_names;
  full_names.reserve(args.nodes->size());
  for (const auto& n : *args.nodes) full_names.push_back(n.name);
  return full_names;
}

std::string PodLabel(const k8s::PodObject& pod) {
  return pod.meta.namespace_.empty() ? pod.meta.name : pod.meta.namespace_ + "/" + pod.meta.name;
}

}  // namespace

std::string_view ToString(BindEvents e) { return e == BindEvents::kAll ? "all" : "notable"; }

std::optional<BindEvents> ParseBindEvents(std::string_view text) {
  if (text == "notable") return BindEvents::kNotable;
  if (text == "all") return BindEvents::kAll;
  return std::nullopt;
}

ExtenderVerbs::ExtenderVerbs(placement::Pipeline* pipeline, k8s::KubeWriter* writer, Metrics* metrics,
                             Recorder* recorder, bool log_decisions)
    : pipeline_(pipeline), writer_(writer), metrics_(metrics), recorder_(recorder), log_(log_decisions) {}

Reply ExtenderVerbs::Refused(Verb verb, std::string_view message) {
  Reply r;
  switch (verb) {
    case Verb::kFilter: r.body = protocol::EncodeFilterError(message); break;
    case Verb::kBind: r.body = protocol::EncodeBindingResult(message); break;
    default: r.status = 400, r.body = JsonError(message);
  }
  r.error = true;
  // Decoders say "invalid JSON: ..." when the body does not parse at all.
  r.request_not_json = message.starts_with("invalid JSON");
  return r;
}

Reply ExtenderVerbs::Handle(Verb verb, std::string_view body, bool body_padded) {
  auto start = Clock::now();
  Reply reply;
  switch (verb) {
    case Verb::kFilter: reply = FilterImpl(body, body_padded); break;
    case Verb::kPrioritize: reply = PrioritizeImpl(body, body_padded, false); break;
    case Verb::kPrioritizePodsWithoutGpus: reply = PrioritizeImpl(body, body_padded, true); break;
    case Verb::kBind: reply = BindImpl(body); break;
    case Verb::kPreempt: reply = PreemptImpl(body); break;
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (metrics_) metrics_->ObserveRequest(verb, seconds, reply.error || reply.status != 200);
  // A body that failed to parse as JSON is recorded as text so the line stays valid JSON.
  if (recorder_) recorder_->Record(ToString(verb), body, !reply.request_not_json, reply.status, reply.body);
  return reply;
}

Result<protocol::ExtenderArgs> ExtenderVerbs::DecodeArgs(std::string_view body, bool padded) {
  protocol::ExtenderArgsOptions options;
  options.padded = padded;
  if (!learn_nodes_.load(std::memory_order_relaxed)) return protocol::DecodeExtenderArgs(body, options);
  // One short shared lock per lookup: ApplyNode below needs the model's exclusive lock.
  options.decode_node = [this](std::string_view name) { return pipeline_->model().Read().Find(name) == nullptr; };
  auto args = protocol::DecodeExtenderArgs(body, options);
  if (args && args->nodes) {
    for (const auto& n : *args->nodes) {
      if (!n.object) continue;
      pipeline_->model().ApplyNode(*n.object);
      if (log_) LogDecision(LogLevel::kInfo, "learn-node", {{"node", n.name}});
    }
  }
  return args;
}

std::string ExtenderVerbs::FilterReply(const protocol::ExtenderArgs& args, std::span<const std::string_view> names,
                                       const placement::FilterOutcome& outcome) {
  if (outcome.passed.empty()) return protocol::EncodeFilterResult(args, names, outcome);
  placement::FilterOutcome passed_only;
  passed_only.passed = outcome.passed;
  return protocol::EncodeFilterResult(args, names, passed_only);
}

Reply ExtenderVerbs::FilterImpl(std::string_view body, bool padded) {
  auto start = Clock::now();
  auto args = DecodeArgs(body, padded);
  if (!args) {
    if (log_) LogDecision(LogLevel::kWarn, "filter", {{"error", args.error()}});
    return Refused(Verb::kFilter, args.error());
  }
  cluster::PodRequest pod = cluster::MakePodRequest(args->pod);
  if (pod.wants_gpus() && !pod.uid.empty()) pipeline_->model().pending().Put(pod);

  // When both NodeNames and Nodes come, both are answered.
  std::vector<std::string_view> full_names;
  const std::vector<std::string_view>& names = RequestNames(*args, full_names);
  if (IsGroupMember(pod)) return GroupFilter(*args, pod, names);
  placement::FilterOutcome outcome = pipeline_->Filter(pod, std::span<const std::string_view>(names));
  if (outcome.passed.empty()) {  // Turned away everywhere: it waits where GPUs may free (requeue_rule.h).
    std::vector<std::string> capacity_failed;
    for (const auto& f : outcome.failed) capacity_failed.emplace_back(names[f.index]);
    cluster::RequeueRule(pipeline_->model()).TurnedAway(pod, capacity_failed);
  }

  std::string out = FilterReply(*args, names, outcome);

  if (metrics_) {
    metrics_->CountDecision(Verb::kFilter, "passed", outcome.passed.size());
    metrics_->CountDecision(Verb::kFilter, "failed", outcome.failed.size());
    metrics_->CountDecision(Verb::kFilter, "unresolvable", outcome.unresolvable.size());
  }
  if (log_) {
    LogFields f = {{"pod", PodLabel(args->pod)},
                   {"gpus", std::to_string(pod.gpus)},
                   {"nodes", std::to_string(names.size())},
                   {"passed", std::to_string(outcome.passed.size())},
                   {"failed", std::to_string(outcome.failed.size())},
                   {"unresolvable", std::to_string(outcome.unresolvable.size())},
                   {"took_us", std::to_string(MicrosSince(start))}};
    if (!pod.error.empty()) f.push_back({"pod_error", pod.error});
    LogDecision(LogLevel::kInfo, "filter", f);
  }
  return Reply{200, std::move(out)};
}

Reply ExtenderVerbs::PrioritizeImpl(std::string_view body, bool padded, bool without_gpus) {
  auto start = Clock::now();
  const Verb verb = without_gpus ? Verb::kPrioritizePodsWithoutGpus : Verb::kPrioritize;
  auto args = DecodeArgs(body, padded);
  if (!args) {
    if (log_) LogDecision(LogLevel::kWarn, ToString(verb), {{"error", args.error()}});
    return Refused(verb, args.error());
  }
  cluster::PodRequest pod = cluster::MakePodRequest(args->pod);
  if (without_gpus && !pod.wants_gpus() && dra_) {  // DRA GPUs through its own claims: scored as a GPU pod.
    if ((pod.dra_ask = dra_->AskOf(args->pod))) pod.gpus = pod.dra_ask->gpus;
  }
  if (without_gpus && pod.wants_gpus() && !pod.dra_ask) {
    // The main entry's filter (and bind) place GPU pods; this entry adds nothing to them.
    if (metrics_) metrics_->CountDecision(verb, "gpu_pod");
    if (log_)
      LogDecision(LogLevel::kDebug, ToString(verb), {{"pod", PodLabel(args->pod)}, {"gpus", std::to_string(pod.gpus)},
                                                      {"skipped", "asks for GPUs"},
                                                      {"took_us", std::to_string(MicrosSince(start))}});
    return Reply{200, "[]"};
  }
  if (pod.wants_gpus() && !pod.uid.empty() && !pod.dra_ask) pipeline_->model().pending().Put(pod);
  std::vector<std::string_view> full_names;
  const std::vector<std::string_view>& names = RequestNames(*args, full_names);
  auto scores = pod.dra_ask         ? pipeline_->Prioritize(pod, std::span<const std::string_view>(names))
                : without_gpus      ? pipeline_->Prioritize(pod, std::span<const std::string_view>(names), true)
                : IsGroupMember(pod) ? GroupScores(pod, names)
                                     : pipeline_->Prioritize(pod, std::span<const std::string_view>(names));

  std::string out = protocol::EncodeHostPriorityList(names, scores);
  int best = -1;
  uint32_t best_index = 0;
  for (const auto& sc : scores)
    if (sc.score > best) best = sc.score, best_index = sc.index;
  if (metrics_) metrics_->CountDecision(verb, "scored", scores.size());
  if (log_) {
    LogDecision(LogLevel::kInfo, ToString(verb),
                {{"pod", PodLabel(args->pod)},
                 {"gpus", std::to_string(pod.gpus)},
                 {"nodes", std::to_string(names.size())},
                 {"best_node", best >= 0 ? std::string(names[best_index]) : std::string()},
                 {"best_score", std::to_string(best < 0 ? 0 : best)},
                 {"took_us", std::to_string(MicrosSince(start))}});
  }
  return Reply{200, std::move(out)};
}

Reply ExtenderVerbs::BindImpl(std::string_view body) {
  auto start = Clock::now();
  auto args = protocol::DecodeBindingArgs(body);
  if (!args) {
    if (log_) LogDecision(LogLevel::kWarn, "bind", {{"error", args.error()}});
    if (metrics_) metrics_->CountDecision(Verb::kBind, "error");
    return Refused(Verb::kBind, args.error());
  }
  std::string label = args->pod_namespace + "/" + args->pod_name;
  auto fail = [&](std::string message) {
    if (metrics_) metrics_->CountDecision(Verb::kBind, "error");
    if (log_)
      LogDecision(LogLevel::kWarn, "bind", {{"pod", label}, {"node", args->node}, {"error", message},
                                   {"took_us", std::to_string(MicrosSince(start))}});
    return Refused(Verb::kBind, message);
  };

  auto pod = pipeline_->model().pending().Get(args->pod_uid);
  if (!pod) {
    return fail(fmt::format("pod {} (uid {}) is unknown to topofit: it was not seen by filter or prioritize "
                            "(or its entry expired)", label, args->pod_uid));
  }
  // What the pod's event will say, read before the reservation changes the node.
  const std::string node_name = args->node;
  const bool member = IsGroupMember(*pod);  // Its slot's GPUs: nothing to explain or choose.
  placement::Explanation why;
  placement::DraBindView dra;
  if (!member) {
    why = placement::Explain(*pipeline_, *pod, std::span<const std::string>(&node_name, 1));
    dra = DraView(*pod, node_name);
  }
  auto gpus = member ? groups_->Bind(*pod, args->node) : pipeline_->ReserveBest(*pod, args->node);
  if (!gpus) return fail(fmt::format("cannot reserve GPUs for {} on {}: {}", label, args->node, gpus.error()));
  std::string ids = gpus->ToString();
  std::string plan_note;
  std::map<std::string, std::string> annotations = BindAnnotations(*pod, args->node, *gpus, plan_note);
  const std::string summary = member ? GroupBoundMessage(*pod, node_name, *gpus) : BindSummary(why, dra, *gpus);
  if (!summary.empty()) annotations[k8s::kPlacementAnnotation] = summary;
  Status bound = writer_->Bind(args->pod_namespace, args->pod_name, args->pod_uid, args->node, annotations);
  if (!bound.ok()) {
    (void)pipeline_->Release(args->pod_uid);
    return fail(fmt::format("binding {} to {}: {}", label, args->node, bound.error()));
  }
  Bound(*args, *pod, member);
  if (!summary.empty() && (bind_events_ == BindEvents::kAll || member || dra.dra))
    writer_->RecordPodEvent({args->pod_namespace, args->pod_name, args->pod_uid, "Normal", "GPUsAssigned", summary});
  if (metrics_) metrics_->CountDecision(Verb::kBind, "bound");
  if (log_) {
    LogFields f = {{"pod", label}, {"node", args->node}, {"gpus", ids}, {"took_us", std::to_string(MicrosSince(start))}};
    if (!plan_note.empty()) f.push_back({"no_plan", plan_note});
    if (dra.dra) f.push_back({"dra", dra.Note()});
    LogDecision(LogLevel::kInfo, "bind", f);
  }
  return Reply{200, protocol::EncodeBindingResult("")};
}

std::string ExtenderVerbs::BindSummary(const placement::Explanation& why, const placement::DraBindView& dra, GpuSet gpus) {
  if (why.nodes.empty()) return {};
  std::string summary = placement::PlacementSummary(why.nodes.front(), gpus);
  if (dra.dra) summary += "; " + dra.Note();
  return summary;
}

void ExtenderVerbs::Bound(const protocol::BindingArgs& args, const cluster::PodRequest& pod, bool member) {
  (void)pipeline_->Confirm(args.pod_uid);
  if (member) groups_->Bound(pod, args.node);
  pipeline_->model().pending().Erase(args.pod_uid);
  pipeline_->model().waits().Forget(args.pod_uid);
}

std::map<std::string, std::string> ExtenderVerbs::BindAnnotations(const cluster::PodRequest& pod, const std::string& node,
                                                                   GpuSet gpus, std::string& plan_note) const {
  std::map<std::string, std::string> annotations{{k8s::kGpuIdsAnnotation, gpus.ToString()}};
  std::vector<std::string> uuids;  // By device index: replica or MIG device ids on a shared node (docs/shared-gpus.md).
  bool mig = false;
  {
    auto reader = pipeline_->model().Read();
    const cluster::NodeState* n = reader.Find(node);
    if (n && n->spec().dra()) {
      plan_note = "DRA node: the pod's ResourceClaim names its GPUs";  // A plan there would bind no one.
      return annotations;
    }
    if (n) {
      uuids = n->spec().DeviceIds();
      mig = n->spec().shared.mig();
    }
  }
  if (mig && uuids.empty()) {
    plan_note = fmt::format("node {} has MIG devices and publishes no {} (index-only placement)", node,
                            k8s::kGpuMigUuidsAnnotation);
    return annotations;
  }
  auto unix_now = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
  auto plan = placement::MakeGpuPlan(pod.containers, gpus, node, uuids, unix_now);
  if (plan.ok()) {
    annotations.emplace(k8s::kGpuPlanAnnotation, k8s::EncodeGpuAssignment(*plan));
  } else {
    plan_note = plan.error();
  }
  return annotations;
}

placement::DraBindView ExtenderVerbs::DraView(const cluster::PodRequest& pod, const std::string& node) const {
  placement::DraBindView view = placement::ViewDraBind(*pipeline_, pod, node, std::nullopt);
  if (!view.dra || !dra_) return view;
  const auto deadline = Clock::now() + claim_wait_;
  for (;;) {
    std::optional<cluster::DraAllocation> a = dra_->AllocationOf(pod.uid);
    if (a && a->node == node) return placement::ViewDraBind(*pipeline_, pod, node, a);
    if (Clock::now() >= deadline) return view;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Reply ExtenderVerbs::PreemptImpl(std::string_view body) {
  auto start = Clock::now();
  auto args = protocol::DecodePreemptionArgs(body);
  if (!args) {
    if (log_) LogDecision(LogLevel::kWarn, "preempt", {{"error", args.error()}});
    return Refused(Verb::kPreempt, args.error());
  }
  cluster::PodRequest pod = cluster::MakePodRequest(args->pod);
  // Meta victims (UIDs; priorities from the model) when given, else the full victims.
  placement::NodeVictims candidates;
  std::map<std::string, int64_t> pdb;
  for (const auto& [node, victims] : args->node_to_meta_victims) {
    auto& list = candidates[node];
    for (const auto& uid : victims.uids) list.push_back({uid, std::nullopt});
    pdb[node] = victims.num_pdb_violations;
  }
  for (const auto& [node, victims] : args->node_to_victims) {
    if (candidates.count(node)) continue;
    auto& list = candidates[node];
    for (const auto& p : victims.pods) list.push_back({p.meta.uid, p.priority});
    pdb[node] = victims.num_pdb_violations;
  }
  placement::PreemptOutcome outcome = placement::Preempt(*pipeline_, pod, candidates);

  std::string out = protocol::EncodePreemptionResult(outcome.victims, pdb);
  if (metrics_) {
    metrics_->CountDecision(Verb::kPreempt, "nodes_kept", outcome.victims.size());
    metrics_->CountDecision(Verb::kPreempt, "nodes_dropped", candidates.size() - outcome.victims.size());
  }
  if (log_) {
    LogDecision(LogLevel::kInfo, "preempt", {{"pod", PodLabel(args->pod)},
                                    {"gpus", std::to_string(pod.gpus)},
                                    {"candidate_nodes", std::to_string(candidates.size())},
                                    {"kept_nodes", std::to_string(outcome.victims.size())},
                                    {"took_us", std::to_string(MicrosSince(start))}});
  }
  return Reply{200, std::move(out)};
}

}  // namespace topofit::server
