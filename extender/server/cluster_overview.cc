#include "extender/server/cluster_overview.h"

#include <fmt/format.h>

#include <functional>

#include "base/json_writer.h"

namespace topofit::server {
namespace {

// The names and, of each node, only the levels' labels (not the dozen others kubelet and GPU Feature
// Discovery set): what the map reads; `source` gets the same as bytes.
std::vector<groups::NodeLabels> LevelLabels(const std::vector<cluster::NodeInfo>& nodes,
                                            const groups::DomainLevels& levels, std::string* source) {
  std::vector<groups::NodeLabels> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) {
    groups::NodeLabels& l = out.emplace_back(groups::NodeLabels{n.name, {}});
    *source += n.name + '\x1d';
    for (const auto& level : levels.levels) {
      for (const std::string& key : level.keys) {
        auto it = n.labels.find(key);
        if (it == n.labels.end()) continue;
        l.labels.insert(*it);
        *source += key + '\x1e' + it->second + '\x1f';
      }
    }
  }
  return out;
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

ClusterOverview::ClusterOverview(std::vector<cluster::NodeInfo> nodes, const groups::DomainLevels& levels,
                                 OverviewLayouts* layouts)
    : nodes_(std::move(nodes)) {
  std::string source;
  std::vector<groups::NodeLabels> labels = LevelLabels(nodes_, levels, &source);
  auto build = [&] {
    auto made = std::make_shared<OverviewLayout>();
    made->map = groups::DomainMap::Build(levels, std::move(labels));
    made->overview = groups::DomainOverview::Build(made->map);
    made->key = fmt::format("{:016x}", std::hash<std::string>{}(LayoutText(made->map, made->overview)));
    made->source = source;
    return std::shared_ptr<const OverviewLayout>(std::move(made));
  };
  layout_ = layouts ? layouts->Get(source, build) : build();
  // A name the model gave twice keeps one entry in the map (its last); the nodes it points at agree.
  info_of_.assign(layout_->map.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (auto at = layout_->map.Find(nodes_[i].name)) info_of_[*at] = i;
  }
}

std::string ClusterOverview::Json(std::string_view known_layout) const {
  const groups::DomainOverview& o = overview();
  const groups::DomainMap& map = layout_->map;
  std::string out = "{\"layout\":\"" + layout_key() + "\",\"levels\":";
  AppendArray(out, o.levels.size(), [&](size_t i) { AppendJsonString(out, map.levels().levels[o.levels[i]].name); });
  if (known_layout == layout_key()) {
    out += ",\"unchanged\":true";
  } else {
    out += ",\"nodes\":";
    AppendArray(out, o.order.size(), [&](size_t i) { AppendJsonString(out, map.name(o.order[i])); });
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
  const groups::DomainOverview& o = overview();
  uint32_t first = 0, count = static_cast<uint32_t>(o.order.size());
  if (!path.empty()) {
    auto d = o.Find(path);
    if (!d) {
      std::string levels;
      for (int l : o.levels) levels += (levels.empty() ? "" : "/") + layout_->map.levels().levels[l].name;
      return Error{fmt::format("no domain '{}' in the overview (its paths are {}, '-' where a node has no label)", path,
                               levels.empty() ? "none: no level is drawn" : levels)};
    }
    first = o.domains[*d].first;
    count = o.domains[*d].count;
  }
  std::vector<const cluster::NodeInfo*> out;
  out.reserve(count);
  for (uint32_t i = first; i < first + count; ++i) out.push_back(&info(i));
  return out;
}

}  // namespace topofit::server
