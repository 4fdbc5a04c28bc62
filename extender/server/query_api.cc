#include "extender/server/query_api.h"

#include <charconv>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "extender/k8s/object_decoder.h"
#include "base/work_deadline.h"
#include "extender/k8s/yaml_to_json.h"
#include "extender/placement/explain.h"
#include "extender/server/cluster_overview.h"
#include "base/json_writer.h"

namespace topofit::server {
namespace {

using nlohmann::json;

// JSON has no infinity: +inf (the lexicographic rule's price, its rate) is null.
json FiniteOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json Shapes(const cluster::FreeShapes& s) {
  json out = json::object();
  for (size_t i = 0; i < cluster::FreeShapes::kSizes.size(); ++i)
    out[std::to_string(cluster::FreeShapes::kSizes[i])] = s.nvlink_sets[i];
  return out;
}

json PodJson(const cluster::PodGpuInfo& p) {
  json containers = json::object();
  for (const auto& [name, gpus] : p.containers) containers[name] = gpus.Indices();
  return {{"uid", p.uid},       {"pod", p.pod},       {"node", p.node},
          {"gpus", p.gpus.Indices()}, {"count", p.count}, {"kind", std::string(cluster::ToString(p.kind))},
          {"unknownIdentity", p.unknown_identity}, {"conflict", p.conflict}, {"priority", p.priority},
          {"state", std::string(cluster::ToString(p.state))}, {"observed", p.observed},
          {"terminating", p.terminating}, {"containers", containers}};
}

// Per GPU: {index, uuid, pciBusId, state, pod, uid, container, terminating, guessed}.
json GpuStatesJson(const cluster::NodeInfo& n) {
  json out = json::array();
  for (const auto& g : n.gpus) {
    out.push_back({{"index", g.index}, {"uuid", g.uuid}, {"pciBusId", g.pci_bus_id},
                   {"state", std::string(cluster::ToString(g.state))}, {"pod", g.pod}, {"uid", g.uid},
                   {"container", g.container}, {"terminating", g.terminating}, {"guessed", g.guessed}});
    if (!g.device.empty()) {  // A shared node: the entry is a device of physical GPU `gpu`.
      out.back()["gpu"] = g.gpu;
      out.back()["device"] = g.device;
    }
  }
  return out;
}

// A node that shares its GPUs: the physical GPUs, what the devices are and which are free.
json SharingJson(const cluster::SharedDevices& s, GpuSet usable, GpuSet free) {
  json out = {{"mode", std::string(cluster::ToString(s.mode))},
              {"physicalGpus", s.gpus},
              {"devicesPerGpu", s.per_gpu},
              {"freeDevices", free.size()},
              {"wholeFreeGpus", s.WholeFree(usable, free).Indices()},
              {"gpusWithFreeDevices", s.GpusOf(free).Indices()}};
  if (s.mig()) {
    out["migProfile"] = s.mig_profile;
    out["migComputeSlices"] = s.mig_compute_slices;
    out["migMemoryGB"] = s.mig_memory_gb;
  }
  return out;
}

json NodeSummary(const cluster::NodeInfo& n) {
  json out = {{"name", n.name},
          {"gpus", n.gpu_count},
          {"allocatable", n.allocatable},
          {"usable", n.usable.size()},
          {"free", n.free.size()},
          {"freeGpus", n.free.Indices()},
          {"topologySource", std::string(cluster::ToString(n.source))},
          {"profile", n.profile},
          {"freeNvlinkSets", Shapes(n.free_shapes)},
          {"pods", n.pods.size()},
          {"warnings", n.warnings}};
  if (n.shared.shared()) out["sharing"] = SharingJson(n.shared, n.usable, n.free);
  return out;
}

// One node of an explanation; `info` gives each GPU's state (why GPUs are not free: free, planned,
// in-use, foreign, unhealthy, unusable) and the node's warnings (a topology modelled as given, ...).
json ExplainNodeJson(const placement::NodeExplanation& n, const std::optional<cluster::NodeInfo>& info) {
  json parts = json::array();
  for (const auto& p : n.parts) parts.push_back({{"plugin", std::string(p.plugin)}, {"value", p.value}, {"weight", p.weight}});
  json states = json::array(), warnings = json::array();
  if (info) {
    for (const auto& g : info->gpus) states.push_back(std::string(cluster::ToString(g.state)));
    warnings = info->warnings;
  }
  json out = {{"node", n.node},
          {"result", std::string(placement::ToString(n.code))},
          {"gpuStates", states},
          {"reason", n.reason},
          {"freeGpus", n.free.Indices()},
          {"set", n.set ? json(n.set->Indices()) : json(nullptr)},
          {"setBy", n.set_by},
          {"bandwidthGBps", n.bandwidth_gbps},
          {"worstLink", n.worst_link},
          {"links", n.links},
          {"score", n.score},
          {"parts", parts},
          {"warnings", warnings}};
  // Both sides of the trade, in GPUs; interconnectGpus null: a slower set under best-ring-first.
  if (n.trade)
    out["trade"] = {{"fragmentationGpus", n.trade->fragmentation_gpus},
                    {"interconnectGpus", FiniteOrNull(n.trade->interconnect_gpus)}};
  // What the node costs the groups expected, in GPUs, when that ordered the best band (band_loss.h).
  if (n.band_loss) out["bandLoss"] = {{"plugin", n.band_loss_by}, {"gpus", *n.band_loss}};
  if (n.shared.shared()) {
    out["setPhysicalGpus"] = n.set ? json(n.set_gpus.Indices()) : json(nullptr);
    out["sharing"] = {{"mode", std::string(cluster::ToString(n.shared.mode))},
                      {"physicalGpus", n.shared.gpus},
                      {"freeDevices", n.free.size()},
                      {"wholeFreeGpus", n.whole_free_gpus.Indices()}};
  }
  return out;
}

Reply Json(int status, const json& body) { return Reply{status, body.dump()}; }

}  // namespace

Reply QueryApi::Nodes() const {
  json items = json::array();
  for (const auto& n : pipeline_->model().Nodes()) items.push_back(NodeSummary(n));
  auto totals = pipeline_->model().Totals();
  return Json(200, {{"nodes", items},
                    {"totals", {{"nodes", totals.nodes}, {"gpuNodes", totals.gpu_nodes},
                                {"usableGpus", totals.usable_gpus}, {"freeGpus", totals.free_gpus},
                                {"reservedGpus", totals.reserved_gpus},
                                {"nodesWithWarnings", totals.nodes_with_warnings},
                                {"freeNvlinkSets", Shapes(totals.free_shapes)}}}});
}

namespace {

// One node in full: the summary, its pods, and (with a topology) link matrix, bandwidths, holders.
json NodeDetail(const cluster::NodeInfo& n) {
  json out = NodeSummary(n);
  json pods = json::array();
  for (const auto& p : n.pods) pods.push_back(PodJson(p));
  out["pods"] = pods;
  out["gpuStates"] = GpuStatesJson(n);
  out["observed"] = n.observed;
  if (n.topology) {
    const Topology& t = *n.topology;
    json links = json::array(), bw = json::array();
    for (int a = 0; a < t.gpu_count(); ++a) {
      json row = json::array(), bw_row = json::array();
      for (int b = 0; b < t.gpu_count(); ++b) {
        row.push_back(ToString(t.link(a, b)));
        bw_row.push_back(t.bandwidth_gbps(a, b));
      }
      links.push_back(row);
      bw.push_back(bw_row);
    }
    out["linkMatrix"] = links;
    out["bandwidthGBps"] = bw;
    // Which pod holds each GPU ("" when free).
    json holders = json::array();
    for (int g = 0; g < t.gpu_count(); ++g) {
      std::string holder;
      for (const auto& p : n.pods)
        if (p.gpus.contains(g)) holder = p.pod;
      holders.push_back(holder);
    }
    out["gpuHolders"] = holders;
  }
  return out;
}

}  // namespace

Reply QueryApi::Node(std::string_view name) const {
  auto n = pipeline_->model().Node(name);
  if (!n) return Reply{404, JsonError(fmt::format("unknown node '{}'", name))};
  return Json(200, NodeDetail(*n));
}

Reply QueryApi::Overview(std::string_view known_layout) const {
  return Reply{200, ClusterOverview(pipeline_->model().Nodes(), levels_, &layouts_).Json(known_layout)};
}

Reply QueryApi::UiNodes(std::string_view domain, std::string_view limit) const {
  size_t most = SIZE_MAX;
  if (!limit.empty()) {
    auto [end, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), most);
    if (ec != std::errc() || end != limit.data() + limit.size())
      return JsonErrorReply(400, fmt::format("limit '{}' is not a count", limit));
  }
  ClusterOverview overview(pipeline_->model().Nodes(), levels_, &layouts_);
  auto nodes = overview.NodesOf(domain);
  if (!nodes) return JsonErrorReply(404, nodes.error());
  json items = json::array();
  for (size_t i = 0; i < nodes->size() && i < most; ++i) {
    json item = NodeDetail(*(*nodes)[i]);
    item["labels"] = (*nodes)[i]->labels;  // The filter of the web view matches them.
    items.push_back(std::move(item));
  }
  return Json(200, {{"nodes", items}, {"total", nodes->size()}});
}

Reply QueryApi::Pod(std::string_view ns, std::string_view name) const {
  auto p = pipeline_->model().PodByName(ns, name);
  if (!p) return Reply{404, JsonError(fmt::format("pod {}/{} holds no GPUs in the model", ns, name))};
  return Json(200, PodJson(*p));
}

placement::ProductShortfall QueryApi::Shortfall() const {
  return pipeline_->Shortfall(*pipeline_->workload().Snapshot());
}

Reply QueryApi::Workload() const {
  auto snap = pipeline_->workload().Snapshot();
  json shapes = json::array();
  for (const auto& s : snap->shapes) {
    shapes.push_back({{"gpus", s.gpus},
                      {"cpuMilli", s.cpu_milli},
                      {"memoryBytes", s.memory_bytes},
                      {"gpuProducts", s.products},
                      {"topologyPolicy", std::string(cluster::ToString(s.policy))},
                      {"share", s.weight}});
  }
  // Model-bound demand against the free GPUs (product_shortfall.h): what FragmentationGradient weighs.
  const placement::ProductShortfall shortfall = pipeline_->Shortfall(*snap);  // The shapes listed above.
  json models = json::array();
  for (const auto& d : shortfall.demands()) {
    json products = json::array();
    for (uint32_t p : d.products) products.push_back(cluster::GpuProductName(p));
    models.push_back({{"gpuProducts", products}, {"share", d.share}, {"wantedGpus", d.wanted}, {"freeGpus", d.free},
                      {"bestRing", d.best_ring}});
  }
  return Json(200, {{"observedGpuPods", snap->observed},
                    {"halfLifePods", snap->half_life},
                    {"summary", placement::DescribeWorkload(*snap)},
                    {"shapes", shapes},
                    {"freeGpus", shortfall.free_total()},
                    {"gpuModels", models},
                    {"shortfallGpus", shortfall.Now()},
                    {"gpuModelsSummary", placement::DescribeShortfall(shortfall)}});
}

Reply QueryApi::Explain(std::string_view body, std::string_view nodes) const {
  std::string converted;
  std::string_view text = body;
  if (!k8s::LooksLikeJson(body)) {
    auto j = k8s::YamlToJson(body);
    // Stopped (the request's deadline, the server's stop) is no fault of the body's.
    if (!j) return WorkDeadline::Expired().empty() ? Reply{400, JsonError(j.error())} : JsonErrorReply(503, j.error());
    converted = std::move(*j);
    text = converted;
  }
  auto pod = k8s::DecodePod(text);
  if (!pod) return Reply{400, JsonError(pod.error())};
  cluster::PodRequest request = cluster::MakePodRequest(*pod);
  std::vector<std::string> names;
  for (size_t start = 0; start < nodes.size();) {
    size_t comma = nodes.find(',', start);
    if (comma == std::string_view::npos) comma = nodes.size();
    if (comma > start) names.emplace_back(nodes.substr(start, comma - start));
    start = comma + 1;
  }
  placement::Explanation e = placement::Explain(*pipeline_, request, names);
  json out = {{"pod", e.pod}, {"gpus", e.gpus}, {"policy", e.policy}, {"minLink", e.min_link},
              {"error", e.error}, {"chosen", e.chosen ? json(*e.chosen) : json(nullptr)},
              {"workload", e.workload}, {"gpuModels", e.gpu_models},
              {"interconnectRate", FiniteOrNull(e.interconnect_rate)}, {"nodes", nullptr}};
  // The nodes are written one at a time into the text: a document of every node at once is ~40 MB
  // of small allocations for 5,000 nodes (the reply is 2 MB), which a flood of explains would hold
  // four at a time (docs/hostile-input.md, "Hostile traffic under load").
  if (json group = GroupExplain(request); !group.is_null()) out["group"] = std::move(group);
  std::string reply = out.dump();
  const size_t at = reply.find(R"("nodes":null)");
  std::string nodes_text = "[";
  for (const auto& n : e.nodes) {
    if (nodes_text.size() > 1) nodes_text += ',';
    nodes_text += ExplainNodeJson(n, pipeline_->model().Node(n.node)).dump();
  }
  nodes_text += ']';
  reply.replace(at + 8, 4, nodes_text);
  return Reply{200, std::move(reply)};
}

}  // namespace topofit::server
