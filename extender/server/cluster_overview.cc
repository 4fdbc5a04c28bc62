#include "extender/server/cluster_overview.h"

#include <fmt/format.h>

#include <functional>

#include "base/json_writer.h"

namespace topofit::server {
namespace {

// The map reads only the levels' keys: a node's other labels (a dozen, from kubelet and GPU Feature
// Discovery) are not copied.
groups::DomainMap MapOf(const std::vector<cluster::NodeInfo>& nodes, const groups::DomainLevels& levels) {
  std::vector<groups::NodeLabels> labels;
  labels.reserve(nodes.size());
  for (const auto& n : nodes) {
    groups::NodeLabels& l = labels.emplace_back(groups::NodeLabels{n.name, {}});
    for (const auto& level : levels.levels) {
      for (const std::string& key : level.keys) {
        if (auto it = n.labels.find(key); it != n.labels.end()) l.labels.insert(*it);
      }
    }
  }
  return groups::DomainMap::Build(levels, std::move(labels));
}

// What the layout key stands for: the drawn levels, the names in order, the domains.
std::string LayoutText(const groups::DomainMap& map, const groups::DomainOverview& o) {
  std::string text;
  for (int l : o.levels) text += map.levels().levels[l].name + '\x1f';
  for (size_t i : o.order) text += map.name(i) + '\x1f';
  for (const auto& d : o.domains)
    text += fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1e", d.depth, d.name, d.missing, d.first, d.count);
  return text;
}

template <typename F>
void AppendArray(std::string& out, size_t n, F&& item) {
  out += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    item(i);
  }
  out += ']';
}

}  // namespace

char OverviewState(const cluster::NodeInfo& node) {
  if (node.gpu_count == 0) return 'n';
  if (!node.warnings.empty()) return 'w';
  for (const auto& g : node.gpus) {
    if (g.state == cluster::GpuState::kForeign || g.state == cluster::GpuState::kUnhealthy ||
        g.state == cluster::GpuState::kUnusable)
      return 'x';
  }
  return '.';
}

ClusterOverview::ClusterOverview(std::vector<cluster::NodeInfo> nodes, const groups::DomainLevels& levels)
    : nodes_(std::move(nodes)), map_(MapOf(nodes_, levels)), overview_(groups::DomainOverview::Build(map_)) {
  // A name the model gave twice keeps one entry in the map (its last); the nodes it points at agree.
  info_of_.assign(map_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (auto at = map_.Find(nodes_[i].name)) info_of_[*at] = i;
  }
  layout_key_ = fmt::format("{:016x}", std::hash<std::string>{}(LayoutText(map_, overview_)));
}

std::string ClusterOverview::Json(std::string_view known_layout) const {
  const groups::DomainOverview& o = overview_;
  std::string out = "{\"layout\":\"" + layout_key_ + "\",\"levels\":";
  AppendArray(out, o.levels.size(), [&](size_t i) { AppendJsonString(out, map_.levels().levels[o.levels[i]].name); });
  if (known_layout == layout_key_) {
    out += ",\"unchanged\":true";
  } else {
    out += ",\"nodes\":";
    AppendArray(out, o.order.size(), [&](size_t i) { AppendJsonString(out, map_.name(o.order[i])); });
    out += ",\"domains\":";
    AppendArray(out, o.domains.size(), [&](size_t i) {
      const groups::OverviewDomain& d = o.domains[i];
      out += fmt::format("[{},", d.depth);
      if (d.missing) {
        out += "null";
      } else {
        AppendJsonString(out, d.name);
      }
      out += fmt::format(",{},{}]", d.first, d.count);
    });
  }
  out += ",\"gpus\":";
  AppendArray(out, o.order.size(), [&](size_t i) { out += std::to_string(info(i).gpu_count); });
  out += ",\"free\":";
  AppendArray(out, o.order.size(), [&](size_t i) { out += std::to_string(info(i).free.size()); });
  out += ",\"states\":\"";
  for (size_t i = 0; i < o.order.size(); ++i) out += OverviewState(info(i));
  out += "\"}";
  return out;
}

Result<std::vector<const cluster::NodeInfo*>> ClusterOverview::NodesOf(std::string_view path) const {
  uint32_t first = 0, count = static_cast<uint32_t>(overview_.order.size());
  if (!path.empty()) {
    auto d = overview_.Find(path);
    if (!d) {
      std::string levels;
      for (int l : overview_.levels) levels += (levels.empty() ? "" : "/") + map_.levels().levels[l].name;
      return Error{fmt::format("no domain '{}' in the overview (its paths are {}, '-' where a node has no label)", path,
                               levels.empty() ? "none: no level is drawn" : levels)};
    }
    first = overview_.domains[*d].first;
    count = overview_.domains[*d].count;
  }
  std::vector<const cluster::NodeInfo*> out;
  out.reserve(count);
  for (uint32_t i = first; i < first + count; ++i) out.push_back(&info(i));
  return out;
}

}  // namespace topofit::server
