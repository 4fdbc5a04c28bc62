#include "extender/groups/domain_overview.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "base/strings.h"

namespace topofit::groups {
namespace {

constexpr std::string_view kMissingSegment = "-";

// The drawn levels: used, and some domain (under the drawn levels above it, missing ones grouped)
// holds two labelled nodes.
std::vector<int> DrawnLevels(const DomainMap& map) {
  std::vector<int> drawn;
  std::vector<std::string> above(map.size());  // Each node's segments at the drawn levels so far.
  for (int l = 0; l < map.levels().size(); ++l) {
    if (!map.used(l)) continue;
    std::unordered_map<std::string, int> nodes_in;
    bool shared = false;
    for (size_t i = 0; i < map.size() && !shared; ++i) {
      const NodeDomain& d = map.domain_of(i, l);
      if (!d.missing) shared = ++nodes_in[above[i] + '\x1f' + d.value] > 1;
    }
    if (!shared) continue;
    drawn.push_back(l);
    for (size_t i = 0; i < map.size(); ++i) {
      const NodeDomain& d = map.domain_of(i, l);
      above[i] += d.missing ? std::string("\x1e") : d.value;
      above[i] += '\x1f';
    }
  }
  return drawn;
}

// One node's domain at a drawn level, as far as order and grouping go: equal segments, one domain.
bool SameSegment(const NodeDomain& a, const NodeDomain& b) {
  return a.missing == b.missing && (a.missing || a.value == b.value);  // A missing value is the node's name.
}

// Labelled domains in natural order, then the missing one.
bool SegmentLess(const NodeDomain& a, const NodeDomain& b) {
  if (a.missing != b.missing) return b.missing;
  return !a.missing && NaturalLess(a.value, b.value);
}

}  // namespace

DomainOverview DomainOverview::Build(const DomainMap& map) {
  DomainOverview o;
  o.levels = DrawnLevels(map);
  o.order.resize(map.size());
  std::iota(o.order.begin(), o.order.end(), size_t{0});
  std::sort(o.order.begin(), o.order.end(), [&](size_t a, size_t b) {
    for (int l : o.levels) {
      const NodeDomain &x = map.domain_of(a, l), &y = map.domain_of(b, l);
      if (!SameSegment(x, y)) return SegmentLess(x, y);
    }
    return NaturalLess(map.name(a), map.name(b));
  });
  const int depths = static_cast<int>(o.levels.size());
  std::vector<int> open(depths, -1);  // The domain open at each depth.
  auto close_from = [&](int depth, uint32_t pos) {
    for (int d = depth; d < depths; ++d) o.domains[open[d]].count = pos - o.domains[open[d]].first;
  };
  for (uint32_t pos = 0; pos < o.order.size(); ++pos) {
    const size_t node = o.order[pos];
    int depth = 0;  // The first depth at which this node leaves the previous node's domains.
    if (pos > 0) {
      while (depth < depths && SameSegment(map.domain_of(node, o.levels[depth]),
                                           map.domain_of(o.order[pos - 1], o.levels[depth])))
        ++depth;
      close_from(depth, pos);
    }
    for (int d = depth; d < depths; ++d) {
      const NodeDomain& seg = map.domain_of(node, o.levels[d]);
      open[d] = static_cast<int>(o.domains.size());
      o.domains.push_back({d, d > 0 ? open[d - 1] : -1, seg.missing ? "" : seg.value, seg.missing, pos, 0});
    }
  }
  if (!o.order.empty()) close_from(0, static_cast<uint32_t>(o.order.size()));
  return o;
}

std::string DomainOverview::Path(size_t domain) const {
  std::vector<std::string_view> names;
  for (int d = static_cast<int>(domain); d >= 0; d = domains[d].parent)
    names.push_back(domains[d].missing ? kMissingSegment : std::string_view(domains[d].name));
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (it != names.rbegin()) path += '/';
    path += *it;
  }
  return path;
}

std::optional<size_t> DomainOverview::Find(std::string_view path) const {
  if (path.empty()) return std::nullopt;
  const auto depth = static_cast<int>(std::count(path.begin(), path.end(), '/'));
  for (size_t i = 0; i < domains.size(); ++i) {
    if (domains[i].depth == depth && Path(i) == path) return i;
  }
  return std::nullopt;
}

}  // namespace topofit::groups
