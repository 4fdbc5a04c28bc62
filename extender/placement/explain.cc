#include "extender/placement/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace topofit::placement {

namespace {

// n.worst_link and n.links: the pairs of `set` on `topology`.
void FillLinks(NodeExplanation& n, const Topology& topology, GpuSet set) {
  std::vector<int> idx = set.Indices();
  std::set<Link> kinds;
  Link worst{LinkClass::Self, 0};
  for (size_t a = 0; a < idx.size(); ++a) {
    for (size_t b = a + 1; b < idx.size(); ++b) {
      Link l = topology.link(idx[a], idx[b]);
      kinds.insert(l);
      if (l < worst) worst = l;
    }
  }
  n.worst_link = ToString(worst);
  for (auto it = kinds.rbegin(); it != kinds.rend(); ++it) n.links.push_back(ToString(*it));
}

}  // namespace

Explanation Explain(const Pipeline& pipeline, const cluster::PodRequest& pod, std::span<const std::string> nodes) {
  Explanation out;
  out.pod = pod.key();
  out.gpus = pod.gpus;
  out.policy = std::string(ToString(pod.intent.policy));
  if (auto min = pod.intent.EffectiveMinLink()) out.min_link = std::string(ToString(*min));
  out.error = pod.error;
  const auto snapshot = pipeline.workload().SnapshotWith(pod);
  out.workload = DescribeWorkload(*snapshot);
  if (ProductShortfall::AnyBound(snapshot->shapes)) out.gpu_models = DescribeShortfall(pipeline.Shortfall(*snapshot));

  std::vector<std::string> all;
  if (nodes.empty()) {
    all = pipeline.model().NodeNames();
    nodes = all;
  }
  std::vector<std::string_view> names(nodes.begin(), nodes.end());
  // A pod without GPUs is explained as the prioritize-pods-without-gpus entry scores it.
  std::vector<NodeEvaluation> evals = pipeline.Evaluate(pod, names, /*score_pods_without_gpus=*/true);

  auto reader = pipeline.model().Read();
  for (const NodeEvaluation& e : evals) {
    NodeExplanation n;
    n.node = std::string(e.name);
    n.code = e.status.code;
    n.reason = e.status.reason;
    n.score = e.score;
    n.parts = e.parts;
    n.trade = e.trade;
    n.band_loss = e.band_loss;
    if (e.band_loss) n.band_loss_by = std::string(pipeline.band_loss()->Name());
    const cluster::NodeState* node = reader.Find(e.name);
    if (node) n.free = node->free();
    if (node && node->spec().dra()) n.set_by = "dra-first-fit";
    if (node && node->spec().shared.shared()) {
      n.shared = node->spec().shared;
      n.whole_free_gpus = n.shared.WholeFree(node->usable(), n.free);
      if (e.candidate.found) n.set_gpus = n.shared.GpusOf(e.candidate.gpus);
    }
    if (e.candidate.found) {
      n.set = e.candidate.gpus;
      n.bandwidth_gbps = e.candidate.bandwidth_gbps();
      if (node && node->topology() && e.candidate.gpus.size() >= 2) FillLinks(n, *node->topology(), e.candidate.gpus);
    }
    out.nodes.push_back(std::move(n));
  }
  std::stable_sort(out.nodes.begin(), out.nodes.end(), [](const NodeExplanation& a, const NodeExplanation& b) {
    bool pa = a.code == FilterCode::kPass, pb = b.code == FilterCode::kPass;
    if (pa != pb) return pa;
    if (a.score != b.score) return a.score > b.score;
    return a.node < b.node;
  });
  if (!out.nodes.empty() && out.nodes.front().code == FilterCode::kPass) out.chosen = out.nodes.front().node;
  out.interconnect_rate = pipeline.config().interconnect_rate;
  return out;
}

std::string PlacementSummary(const NodeExplanation& node, GpuSet gpus) {
  std::string out = fmt::format("{} {} on {}", gpus.size() == 1 ? "GPU" : "GPUs", gpus.ToString(), node.node);
  if (gpus.size() >= 2 && node.set && *node.set == gpus) {
    std::string links;
    for (size_t i = 0; i < node.links.size(); ++i) {
      links += i == 0 ? "" : i + 1 == node.links.size() ? " and " : ", ";
      links += node.links[i];
    }
    out += fmt::format(" over {} link{}, {:.1f} GB/s predicted ring all-reduce", links,
                       node.links.size() == 1 ? "" : "s", node.bandwidth_gbps);
  }
  std::vector<ScorePart> parts;
  for (const ScorePart& p : node.parts)
    if (p.plugin != "SetQuality") parts.push_back(p);
  std::stable_sort(parts.begin(), parts.end(),
                   [](const ScorePart& a, const ScorePart& b) { return a.value * a.weight > b.value * b.weight; });
  for (size_t i = 0; i < parts.size(); ++i)
    out += fmt::format("{}{} {:.2f}", i == 0 ? "; node scores: " : ", ", parts[i].plugin, parts[i].value);
  return out;
}

}  // namespace topofit::placement
