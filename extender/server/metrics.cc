#include "extender/server/metrics.h"

#include <fmt/format.h>

#include <iterator>

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
  Histogram& h = verbs_[size_t(verb)];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      h.buckets[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  h.count.fetch_add(1, std::memory_order_relaxed);
  h.sum_ns.fetch_add(uint64_t(seconds * 1e9), std::memory_order_relaxed);
  if (error) h.errors.fetch_add(1, std::memory_order_relaxed);
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
// Label values: escape backslash, quote and newline as the exposition format requires.
std::string Label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}
}  // namespace

std::string Metrics::Render(const model::ClusterModel& model) const {
  std::string out;
  out += "# HELP topofit_requests_total Extender verb requests.\n# TYPE topofit_requests_total counter\n";
  for (int v = 0; v < kVerbCount; ++v)
    out += fmt::format("topofit_requests_total{{verb=\"{}\"}} {}\n", ToString(Verb(v)), verbs_[v].count.load());
  out += "# HELP topofit_request_errors_total Extender verb requests that were malformed or answered with an error.\n"
         "# TYPE topofit_request_errors_total counter\n";
  for (int v = 0; v < kVerbCount; ++v)
    out += fmt::format("topofit_request_errors_total{{verb=\"{}\"}} {}\n", ToString(Verb(v)), verbs_[v].errors.load());
  out += "# HELP topofit_request_duration_seconds Time to answer an extender verb, server side.\n"
         "# TYPE topofit_request_duration_seconds histogram\n";
  for (int v = 0; v < kVerbCount; ++v) {
    const Histogram& h = verbs_[v];
    uint64_t cumulative = 0;
    std::string_view verb = ToString(Verb(v));
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.buckets[i].load();
      out += fmt::format("topofit_request_duration_seconds_bucket{{verb=\"{}\",le=\"{}\"}} {}\n", verb, kBuckets[i], cumulative);
    }
    uint64_t count = h.count.load();
    out += fmt::format("topofit_request_duration_seconds_bucket{{verb=\"{}\",le=\"+Inf\"}} {}\n", verb, count);
    out += fmt::format("topofit_request_duration_seconds_sum{{verb=\"{}\"}} {:.9f}\n", verb, h.sum_ns.load() / 1e9);
    out += fmt::format("topofit_request_duration_seconds_count{{verb=\"{}\"}} {}\n", verb, count);
  }
  out += "# HELP topofit_decisions_total Placement decisions by verb and outcome (filter counts nodes).\n"
         "# TYPE topofit_decisions_total counter\n";
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, n] : decisions_)
      out += fmt::format("topofit_decisions_total{{verb=\"{}\",outcome=\"{}\"}} {}\n", ToString(Verb(key.first)),
                         Label(key.second), n);
  }

  out += "# HELP topofit_watch_connected 1 while the API watch of a kind is connected (live mode); 0 while it "
         "reconnects, and without a watch.\n# TYPE topofit_watch_connected gauge\n";
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [kind, connected] : watch_connected_)
      out += fmt::format("topofit_watch_connected{{kind=\"{}\"}} {}\n", Label(kind), connected ? 1 : 0);
  }

  auto nodes = model.Nodes();
  auto totals = model.Totals();
  out += "# HELP topofit_node_gpus Usable GPUs of a node.\n# TYPE topofit_node_gpus gauge\n";
  for (const auto& n : nodes)
    out += fmt::format("topofit_node_gpus{{node=\"{}\"}} {}\n", Label(n.name), n.usable.size());
  out += "# HELP topofit_node_free_gpus Free GPUs of a node.\n# TYPE topofit_node_free_gpus gauge\n";
  for (const auto& n : nodes)
    out += fmt::format("topofit_node_free_gpus{{node=\"{}\"}} {}\n", Label(n.name), n.free.size());
  out += "# HELP topofit_node_topology_source Where a node's topology came from (1 for its source): "
         "annotation-profile, annotation-matrix, cloud-instance-type, gfd-labels, generic-fallback, none.\n"
         "# TYPE topofit_node_topology_source gauge\n";
  for (const auto& n : nodes)
    out += fmt::format("topofit_node_topology_source{{node=\"{}\",source=\"{}\"}} 1\n", Label(n.name),
                       model::ToString(n.source));
  out += "# HELP topofit_node_free_nvlink_sets Disjoint free NVLink-connected GPU sets of a size on a node.\n"
         "# TYPE topofit_node_free_nvlink_sets gauge\n";
  for (const auto& n : nodes) {
    for (size_t i = 0; i < model::FreeShapes::kSizes.size(); ++i)
      out += fmt::format("topofit_node_free_nvlink_sets{{node=\"{}\",size=\"{}\"}} {}\n", Label(n.name),
                         model::FreeShapes::kSizes[i], n.free_shapes.nvlink_sets[i]);
  }
  out += "# HELP topofit_free_gpus Free GPUs in the cluster.\n# TYPE topofit_free_gpus gauge\n";
  out += fmt::format("topofit_free_gpus {}\n", totals.free_gpus);
  out += "# HELP topofit_usable_gpus Usable GPUs in the cluster.\n# TYPE topofit_usable_gpus gauge\n";
  out += fmt::format("topofit_usable_gpus {}\n", totals.usable_gpus);
  out += "# HELP topofit_reserved_gpus GPUs reserved by binds in flight.\n# TYPE topofit_reserved_gpus gauge\n";
  out += fmt::format("topofit_reserved_gpus {}\n", totals.reserved_gpus);
  out += "# HELP topofit_free_nvlink_sets Disjoint free NVLink-connected GPU sets of a size, summed over nodes.\n"
         "# TYPE topofit_free_nvlink_sets gauge\n";
  for (size_t i = 0; i < model::FreeShapes::kSizes.size(); ++i)
    out += fmt::format("topofit_free_nvlink_sets{{size=\"{}\"}} {}\n", model::FreeShapes::kSizes[i],
                       totals.free_shapes.nvlink_sets[i]);
  // Every GPU of every topology by its state (docs/node-states.md): free, planned, in-use, foreign,
  // unhealthy, unusable.
  {
    constexpr model::GpuState kStates[] = {model::GpuState::kFree,    model::GpuState::kPlanned,
                                           model::GpuState::kInUse,   model::GpuState::kForeign,
                                           model::GpuState::kUnhealthy, model::GpuState::kUnusable};
    int count[std::size(kStates)] = {};
    for (const auto& n : nodes)
      for (const auto& g : n.gpus) ++count[static_cast<size_t>(g.state)];
    out += "# HELP topofit_gpus GPUs of the cluster's topologies by state: free, planned (placed by topofit, not "
           "observed yet), in-use (observed), foreign (held by pods topofit did not place), unhealthy, unusable.\n"
           "# TYPE topofit_gpus gauge\n";
    for (model::GpuState st : kStates)
      out += fmt::format("topofit_gpus{{state=\"{}\"}} {}\n", model::ToString(st), count[static_cast<size_t>(st)]);
  }
  out += "# HELP topofit_nodes Nodes in the model.\n# TYPE topofit_nodes gauge\n";
  out += fmt::format("topofit_nodes {}\n", totals.nodes);
  out += "# HELP topofit_pending_pods Pods in the pending-pod cache.\n# TYPE topofit_pending_pods gauge\n";
  out += fmt::format("topofit_pending_pods {}\n", totals.pending_pods);
  return out;
}

}  // namespace topofit::server
