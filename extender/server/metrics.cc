#include "extender/server/metrics.h"

#include <fmt/format.h>

#include <array>
#include <iterator>
#include <map>

namespace topofit::server {

std::string_view ToString(Verb verb) {
  switch (verb) {
    case Verb::kFilter: return "filter";
    case Verb::kPrioritize: return "prioritize";
    case Verb::kBind: return "bind";
    case Verb::kPreempt: return "preempt";
    case Verb::kPrioritizePodsWithoutGpus: return "prioritize-pods-without-gpus";
  }
  return "unknown";
}

void Metrics::ObserveRequest(Verb verb, double seconds, bool error) {
  VerbStats& v = verbs_[size_t(verb)];
  v.latency.Observe(seconds);
  if (error) v.errors.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::CountDecision(Verb verb, std::string_view outcome, uint64_t n) {
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  decisions_[{int(verb), std::string(outcome)}] += n;
}

void Metrics::SetWatchConnected(std::string_view kind, bool connected) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = watch_connected_.find(kind); it != watch_connected_.end()) {
    it->second = connected;
  } else {
    watch_connected_.emplace(std::string(kind), connected);
  }
}

namespace {

// Per node: usable and free GPUs, where its topology came from, free NVLink sets by size.
void AppendNodes(std::string& out, const std::vector<cluster::NodeInfo>& nodes) {
  out += "# HELP topofit_node_gpus Usable GPUs of a node.\n# TYPE topofit_node_gpus gauge\n";
  for (const auto& n : nodes)
    out += fmt::format("topofit_node_gpus{{node=\"{}\"}} {}\n", LabelValue(n.name), n.usable.size());
  out += "# HELP topofit_node_free_gpus Free GPUs of a node.\n# TYPE topofit_node_free_gpus gauge\n";
  for (const auto& n : nodes)
    out += fmt::format("topofit_node_free_gpus{{node=\"{}\"}} {}\n", LabelValue(n.name), n.free.size());
  out += "# HELP topofit_node_topology_source Where a node's topology came from (1 for its source): "
         "annotation-profile, annotation-matrix, cloud-instance-type, gfd-labels, generic-fallback, none.\n"
         "# TYPE topofit_node_topology_source gauge\n";
  for (const auto& n : nodes)
    out += fmt::format("topofit_node_topology_source{{node=\"{}\",source=\"{}\"}} 1\n", LabelValue(n.name),
                       cluster::ToString(n.source));
  out += "# HELP topofit_node_free_nvlink_sets Disjoint free NVLink-connected GPU sets of a size on a node.\n"
         "# TYPE topofit_node_free_nvlink_sets gauge\n";
  for (const auto& n : nodes) {
    for (size_t i = 0; i < cluster::FreeShapes::kSizes.size(); ++i)
      out += fmt::format("topofit_node_free_nvlink_sets{{node=\"{}\",size=\"{}\"}} {}\n", LabelValue(n.name),
                         cluster::FreeShapes::kSizes[i], n.free_shapes.nvlink_sets[i]);
  }
}

// The cluster's free, usable and reserved GPUs and free NVLink sets by size.
void AppendTotals(std::string& out, const cluster::ClusterTotals& totals) {
  out += "# HELP topofit_free_gpus Free GPUs in the cluster.\n# TYPE topofit_free_gpus gauge\n";
  out += fmt::format("topofit_free_gpus {}\n", totals.free_gpus);
  out += "# HELP topofit_usable_gpus Usable GPUs in the cluster.\n# TYPE topofit_usable_gpus gauge\n";
  out += fmt::format("topofit_usable_gpus {}\n", totals.usable_gpus);
  out += "# HELP topofit_reserved_gpus GPUs reserved by binds in flight.\n# TYPE topofit_reserved_gpus gauge\n";
  out += fmt::format("topofit_reserved_gpus {}\n", totals.reserved_gpus);
  out += "# HELP topofit_free_nvlink_sets Disjoint free NVLink-connected GPU sets of a size, summed over nodes.\n"
         "# TYPE topofit_free_nvlink_sets gauge\n";
  for (size_t i = 0; i < cluster::FreeShapes::kSizes.size(); ++i)
    out += fmt::format("topofit_free_nvlink_sets{{size=\"{}\"}} {}\n", cluster::FreeShapes::kSizes[i],
                       totals.free_shapes.nvlink_sets[i]);
}

// Every GPU of every topology by its state (docs/node-states.md): free, planned, in-use, foreign,
// unhealthy, unusable.
void AppendGpuStates(std::string& out, const std::vector<cluster::NodeInfo>& nodes) {
  constexpr cluster::GpuState kStates[] = {cluster::GpuState::kFree,    cluster::GpuState::kPlanned,
                                         cluster::GpuState::kInUse,   cluster::GpuState::kForeign,
                                         cluster::GpuState::kUnhealthy, cluster::GpuState::kUnusable};
  int count[std::size(kStates)] = {};
  for (const auto& n : nodes)
    for (const auto& g : n.gpus) ++count[static_cast<size_t>(g.state)];
  out += "# HELP topofit_gpus GPUs of the cluster's topologies by state: free, planned (placed by topofit, not "
         "observed yet), in-use (observed), foreign (held by pods topofit did not place), unhealthy, unusable.\n"
         "# TYPE topofit_gpus gauge\n";
  for (cluster::GpuState st : kStates)
    out += fmt::format("topofit_gpus{{state=\"{}\"}} {}\n", cluster::ToString(st), count[static_cast<size_t>(st)]);
}

// The kind of device a node's nvidia.com/gpu devices are: "whole" GPUs, "replica"s (time-slicing, MPS),
// "mig" devices (docs/shared-gpus.md).
std::string_view DeviceKind(const cluster::SharedDevices& s) {
  return !s.shared() ? "whole" : s.mig() ? "mig" : "replica";
}

// Devices free and held by kind, and the physical GPUs of shared nodes by how much of them is held:
// whole-free (every device free), partly-held, full (no device free).
void AppendDevicesByKind(std::string& out, const std::vector<cluster::NodeInfo>& nodes) {
  constexpr std::string_view kKinds[] = {"whole", "replica", "mig"};
  std::map<std::string_view, std::array<int, 2>> devices;     // kind -> {free, held}
  std::map<std::string_view, std::array<int, 3>> physical;    // kind -> {whole-free, partly-held, full}
  for (const auto& n : nodes) {
    const std::string_view kind = DeviceKind(n.shared);
    devices[kind][0] += n.free.size();
    devices[kind][1] += (n.usable - n.free).size();
    if (!n.shared.shared()) continue;
    for (int g = 0; g < n.shared.gpus; ++g) {
      const GpuSet mine = n.shared.DevicesOf(g) & n.usable;
      if (mine.empty()) continue;
      const GpuSet free = mine & n.free;
      ++physical[kind][free == mine ? 0 : free.empty() ? 2 : 1];
    }
  }
  out += "# HELP topofit_devices nvidia.com/gpu devices by kind (whole GPUs; replica: time-slicing or MPS; mig: MIG "
         "devices) and state: free, held (usable and not free).\n# TYPE topofit_devices gauge\n";
  for (std::string_view kind : kKinds) {
    out += fmt::format("topofit_devices{{kind=\"{}\",state=\"free\"}} {}\n", kind, devices[kind][0]);
    out += fmt::format("topofit_devices{{kind=\"{}\",state=\"held\"}} {}\n", kind, devices[kind][1]);
  }
  out += "# HELP topofit_shared_physical_gpus Physical GPUs of nodes that share them, by kind (replica, mig) and "
         "state: whole-free (all its devices free), partly-held, full (none free).\n"
         "# TYPE topofit_shared_physical_gpus gauge\n";
  constexpr std::string_view kStates[] = {"whole-free", "partly-held", "full"};
  for (std::string_view kind : {kKinds[1], kKinds[2]})
    for (size_t i = 0; i < std::size(kStates); ++i)
      out += fmt::format("topofit_shared_physical_gpus{{kind=\"{}\",state=\"{}\"}} {}\n", kind, kStates[i],
                         physical[kind][i]);
}

// Model-bound demand (placement/product_shortfall.h): per set of GPU models, the GPUs its pods will want over
// the horizon of the free GPUs and the GPUs free there; in all, what the free GPUs cannot give.
void AppendShortfall(std::string& out, const placement::ProductShortfall* shortfall) {
  out += "# HELP topofit_gpu_model_wanted_gpus GPUs that pods bound to a set of GPU models (best_ring: multi-GPU pods "
         "of any model, for their best ring) will ask for until the free GPUs are used.\n"
         "# TYPE topofit_gpu_model_wanted_gpus gauge\n";
  out += "# HELP topofit_gpu_model_free_gpus Free GPUs of a set of GPU models.\n# TYPE topofit_gpu_model_free_gpus gauge\n";
  if (shortfall) {
    for (const auto& d : shortfall->demands()) {
      const std::string labels =
          fmt::format("gpu_products=\"{}\",best_ring=\"{}\"", LabelValue(d.Names()), d.best_ring ? "true" : "false");
      out += fmt::format("topofit_gpu_model_wanted_gpus{{{}}} {:.1f}\n", labels, d.wanted);
      out += fmt::format("topofit_gpu_model_free_gpus{{{}}} {}\n", labels, d.free);
    }
  }
  out += "# HELP topofit_gpu_model_shortfall_gpus GPUs that pods bound to GPU models will ask for and their models' "
         "free GPUs cannot give (expected).\n# TYPE topofit_gpu_model_shortfall_gpus gauge\n";
  out += fmt::format("topofit_gpu_model_shortfall_gpus {:.1f}\n", shortfall ? shortfall->Now() : 0.0);
}

}  // namespace

void Metrics::AppendRequests(std::string& out) const {
  out += "# HELP topofit_requests_total Extender verb requests.\n# TYPE topofit_requests_total counter\n";
  for (int v = 0; v < kVerbCount; ++v)
    out += fmt::format("topofit_requests_total{{verb=\"{}\"}} {}\n", ToString(Verb(v)), verbs_[v].latency.count());
  out += "# HELP topofit_request_errors_total Extender verb requests that were malformed or answered with an error.\n"
         "# TYPE topofit_request_errors_total counter\n";
  for (int v = 0; v < kVerbCount; ++v)
    out += fmt::format("topofit_request_errors_total{{verb=\"{}\"}} {}\n", ToString(Verb(v)), verbs_[v].errors.load());
  out += "# HELP topofit_request_duration_seconds Time to answer an extender verb, server side.\n"
         "# TYPE topofit_request_duration_seconds histogram\n";
  for (int v = 0; v < kVerbCount; ++v)
    verbs_[v].latency.AppendTo(out, "topofit_request_duration_seconds", fmt::format("verb=\"{}\"", ToString(Verb(v))));
}

void Metrics::AppendDecisionsAndWatches(std::string& out) const {
  out += "# HELP topofit_decisions_total Placement decisions by verb and outcome (filter counts nodes).\n"
         "# TYPE topofit_decisions_total counter\n";
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, n] : decisions_)
      out += fmt::format("topofit_decisions_total{{verb=\"{}\",outcome=\"{}\"}} {}\n", ToString(Verb(key.first)),
                         LabelValue(key.second), n);
  }

  out += "# HELP topofit_watch_connected 1 while the API watch of a kind is connected (live mode); 0 while it "
         "reconnects, and without a watch.\n# TYPE topofit_watch_connected gauge\n";
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [kind, connected] : watch_connected_)
      out += fmt::format("topofit_watch_connected{{kind=\"{}\"}} {}\n", LabelValue(kind), connected ? 1 : 0);
  }

  out += "# HELP topofit_requeued_pods_total Pods turned away for want of free GPUs on a node kube-scheduler "
         "saw room on, asked to be tried again once topofit saw GPUs freed there (live mode).\n"
         "# TYPE topofit_requeued_pods_total counter\n";
  out += fmt::format("topofit_requeued_pods_total {}\n", requeued_.load(std::memory_order_relaxed));
}

void Metrics::SetGroupCounts(std::function<GroupCounts()> counts) {
  std::lock_guard<std::mutex> lock(mu_);
  group_counts_ = std::move(counts);
}

void Metrics::AppendGroups(std::string& out) const {
  std::function<GroupCounts()> read;
  {
    std::lock_guard<std::mutex> lock(mu_);
    read = group_counts_;
  }
  const GroupCounts counts = read ? read() : GroupCounts{};
  out += "# HELP topofit_groups Groups of pods (topofit.io/group) by state: waiting (for members, or for room), "
         "planned (reserved whole, members binding), bound.\n"
         "# TYPE topofit_groups gauge\n";
  out += fmt::format("topofit_groups{{state=\"waiting\"}} {}\n", counts.waiting);
  out += fmt::format("topofit_groups{{state=\"planned\"}} {}\n", counts.planned);
  out += fmt::format("topofit_groups{{state=\"bound\"}} {}\n", counts.bound);
  out += "# HELP topofit_groups_preempting Waiting groups whose members topofit leads to where kube-scheduler's "
         "workload-aware preemption of lower priorities would make room (GET /api/v1/groups: preempting names the "
         "victims); one that stays means kube-scheduler does not preempt for it.\n"
         "# TYPE topofit_groups_preempting gauge\n";
  out += fmt::format("topofit_groups_preempting {}\n", counts.preempting);
  out += "# HELP topofit_group_longest_wait_seconds The longest a waiting group has waited since its first member "
         "was seen: for members (fewer than its min-count created) or for room (all there, no plan yet); 0 when "
         "none waits. A large job starving behind small ones grows the second.\n"
         "# TYPE topofit_group_longest_wait_seconds gauge\n";
  out += fmt::format("topofit_group_longest_wait_seconds{{waiting_for=\"members\"}} {:.3f}\n",
                     counts.longest_wait_for_members);
  out += fmt::format("topofit_group_longest_wait_seconds{{waiting_for=\"room\"}} {:.3f}\n", counts.longest_wait_for_room);
  out += "# HELP topofit_group_time_to_place_seconds From a group's first member seen to its plan reserved whole.\n"
         "# TYPE topofit_group_time_to_place_seconds histogram\n";
  group_placed_.AppendTo(out, "topofit_group_time_to_place_seconds");
}

std::string Metrics::Render(const cluster::ClusterModel& model, const placement::ProductShortfall* shortfall) const {
  std::string out;
  AppendRequests(out);
  AppendDecisionsAndWatches(out);
  AppendGroups(out);
  auto nodes = model.Nodes();
  auto totals = model.Totals();
  AppendNodes(out, nodes);
  AppendTotals(out, totals);
  AppendGpuStates(out, nodes);
  AppendDevicesByKind(out, nodes);
  AppendShortfall(out, shortfall);
  out += "# HELP topofit_nodes Nodes in the model.\n# TYPE topofit_nodes gauge\n";
  out += fmt::format("topofit_nodes {}\n", totals.nodes);
  out += "# HELP topofit_pending_pods Pods in the pending-pod cache.\n# TYPE topofit_pending_pods gauge\n";
  out += fmt::format("topofit_pending_pods {}\n", totals.pending_pods);
  return out;
}

}  // namespace topofit::server
