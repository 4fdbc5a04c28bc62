#include "bench/groups_replay.h"

#include <map>
#include <memory>

#include <fmt/format.h>

#include "bench/groups_policies.h"
#include "bench/groups_workload.h"
#include "extender/groups/group_nodes.h"
#include "extender/groups/network_domains.h"

namespace topofit::bench {

namespace {

struct Setup : ReplayCluster {
  std::vector<GroupArrival> arrivals;
  int lowest_level = 0;  // The shape's narrowest network level, in `levels`.
};

struct Alive {
  std::vector<groups::MemberPlan> members;
  bool partial = false;
};

// Counts one placement into `row`; true when the group got any member (it then holds GPUs).
bool Count(const Setup& s, const GroupArrival& a, const std::vector<groups::MemberPlan>& members, GroupReplayRow& row) {
  row.arrivals++;
  row.by_size[a.total_gpus].arrivals++;
  if (members.empty()) return false;
  if (static_cast<int>(members.size()) < a.spec.size) return true;
  row.placed++;
  row.by_size[a.total_gpus].placed++;
  std::map<int, int> nodes;
  for (const auto& m : members) nodes[m.node]++;
  if (members.size() > 1) {
    row.multi++;
    row.allreduce_gbps += PredictedAllReduceGbps(s.shape, s.map, s.shape_levels, members);
  }
  const int lowest_gpus = s.shape.DomainGpus(static_cast<int>(s.shape.fanout.size()) - 1);
  if (nodes.size() > 1 && a.total_gpus <= lowest_gpus) {
    row.spanning++;
    const uint32_t d = s.map.id(members.front().node, s.lowest_level);
    bool one = true;
    for (const auto& m : members) one = one && s.map.id(m.node, s.lowest_level) == d;
    row.one_domain += one;
  }
  return true;
}

// Whether the nodes have room for every member of `spec` (min-count of them), its domains aside:
// nodes of free GPUs enough for spec.gpus each, counted as whole members.
bool RoomForMembers(const groups::GroupNodes& nodes, const groups::GroupSpec& spec) {
  int64_t room = 0;
  for (const groups::GroupNode& n : nodes.nodes) room += (n.free & n.usable).size() / std::max(1, spec.gpus);
  return room >= spec.min_count;
}

GroupReplayRow Replay(const Setup& s, GroupPolicy& policy, int churn) {
  GroupReplayRow row;
  row.policy = policy.name();
  row.capacity = s.shape.gpus();
  groups::GroupNodes nodes = s.empty;
  policy.Start();
  std::multimap<int, Alive> leaving;  // By the arrival index at which it leaves.
  std::vector<Alive> staying;         // Placed during the fill: never leave.
  size_t i = 0;
  for (; i < s.arrivals.size() && static_cast<int>(i) < churn; ++i) {
    for (auto it = leaving.begin(); it != leaving.end() && it->first <= static_cast<int>(i);) {
      groups::GiveBack(nodes, it->second.members);
      it = leaving.erase(it);
    }
    const GroupArrival& a = s.arrivals[i];
    Alive placed{PlaceArrival(policy, nodes, a), false};
    placed.partial = static_cast<int>(placed.members.size()) < a.spec.size;
    if (!Count(s, a, placed.members, row)) continue;
    groups::Take(nodes, placed.members);
    leaving.emplace(static_cast<int>(i) + a.lifetime, std::move(placed));
  }
  const int64_t free_at_fill = FreeGpus(nodes);
  int64_t asked = 0;
  for (; i < s.arrivals.size() && asked < free_at_fill; ++i) {
    const GroupArrival& a = s.arrivals[i];
    asked += a.total_gpus;
    Alive placed{PlaceArrival(policy, nodes, a), false};
    placed.partial = static_cast<int>(placed.members.size()) < a.spec.size;
    if (!Count(s, a, placed.members, row)) {
      (RoomForMembers(nodes, a.spec) ? row.refused_with_room : row.refused_without_room) += a.total_gpus;
      continue;
    }
    groups::Take(nodes, placed.members);
    staying.push_back(std::move(placed));
  }
  for (const auto& [_, a] : leaving) {
    if (a.partial) row.partial_gpus += GpusOf(a.members);
  }
  for (const Alive& a : staying) {
    if (a.partial) row.partial_gpus += GpusOf(a.members);
  }
  row.unallocated = FreeGpus(nodes);
  return row;
}

}  // namespace

int64_t GroupReplayRow::GpusPlaced() const {
  int64_t n = 0;
  for (const auto& [gpus, c] : by_size) n += static_cast<int64_t>(gpus) * c.placed;
  return n;
}

int64_t FreeGpus(const groups::GroupNodes& nodes) {
  int64_t n = 0;
  for (const groups::GroupNode& g : nodes.nodes) n += (g.free & g.usable).size();
  return n;
}

int64_t GpusOf(std::span<const groups::MemberPlan> members) {
  int64_t n = 0;
  for (const groups::MemberPlan& m : members) n += m.gpus.size();
  return n;
}

std::vector<groups::MemberPlan> PlaceArrival(GroupPolicy& policy, const groups::GroupNodes& nodes,
                                             const GroupArrival& a) {
  return a.single ? policy.PlacePod(nodes, a.spec) : policy.Place(nodes, a.spec);
}

double PredictedAllReduceGbps(const ClusterShape& shape, const groups::DomainMap& map, const std::vector<int>& levels,
                              const std::vector<groups::MemberPlan>& members) {
  auto together = [&](int level) {  // Every member in one domain of `level` (an index into `levels`).
    for (const auto& m : members)
      if (map.id(m.node, levels[level]) != map.id(members.front().node, levels[level])) return false;
    return true;
  };
  const int host = static_cast<int>(shape.level_keys.size());  // levels[host]: the hostname.
  if (members.empty() || together(host)) return shape.nvlink_gbps;
  if (shape.nvlink_level >= 0 && together(shape.nvlink_level)) return shape.nvlink_gbps;
  return shape.nic_gbps;
}

Status BuildReplayCluster(const GroupReplayOptions& options, ReplayCluster& out) {
  auto shape = GroupClusterShape(options.shape);
  if (!shape.ok()) return Error{shape.error()};
  auto mix = GroupSizeMix(options.mix);
  if (!mix.ok()) return Error{mix.error()};
  if (options.load <= 0 || options.churn_arrivals < 0 || options.seeds < 1 || !(options.group_half_life >= 1)) {
    return Error{"load must be > 0, churn arrivals >= 0, seeds >= 1 and the group half-life >= 1"};
  }
  out.shape = *shape;
  out.mix = *mix;
  AddShapeNodes(out.shape, *out.model);
  out.map = groups::DomainMap::FromModel(*out.model, out.levels);
  out.empty = groups::ReadGroupNodes(*out.model, out.map);
  out.shape_levels = ShapeLevels(out.shape, out.levels);
  out.mean_lifetime = options.load * out.shape.gpus() / out.mix.MeanGpus();
  return Status{};
}

Result<std::vector<GroupReplayRow>> RunGroupReplay(const GroupReplayOptions& options) {
  Setup s;
  if (Status st = BuildReplayCluster(options, s); !st.ok()) return Error{st.error()};
  s.lowest_level = s.shape_levels[s.shape.fanout.size() - 1];
  const double lifetime = s.mean_lifetime;
  // Enough arrivals for the fill even if every job asked for 1 GPU.
  const int count = options.churn_arrivals + s.shape.gpus() + 1;
  placement::Placer placer;
  groups::GroupShapeOptions expected;
  expected.half_life = options.group_half_life;
  auto policies = AllGroupPolicies(placer, expected, &s.shape, options.pod_domain_loss);
  std::vector<GroupReplayRow> rows(policies.size());
  for (int k = 0; k < options.seeds; ++k) {
    s.arrivals = GenerateGroups(s.mix, s.shape, s.levels, count, lifetime, options.seed + k);
    for (size_t p = 0; p < policies.size(); ++p) {
      GroupReplayRow r = Replay(s, *policies[p], options.churn_arrivals);
      GroupReplayRow& sum = rows[p];
      sum.policy = r.policy;
      sum.gang = policies[p]->gang();
      sum.by_seed.push_back(SeedCounts{r.unallocated, r.one_domain, r.GpusPlaced()});
      sum.arrivals += r.arrivals;
      sum.placed += r.placed;
      sum.spanning += r.spanning;
      sum.one_domain += r.one_domain;
      sum.partial_gpus += r.partial_gpus;
      sum.unallocated += r.unallocated;
      sum.capacity += r.capacity;
      sum.multi += r.multi;
      sum.allreduce_gbps += r.allreduce_gbps;
      sum.refused_with_room += r.refused_with_room;
      sum.refused_without_room += r.refused_without_room;
      for (const auto& [gpus, c] : r.by_size) {
        sum.by_size[gpus].arrivals += c.arrivals;
        sum.by_size[gpus].placed += c.placed;
      }
    }
  }
  return rows;
}

namespace {

// The groups placed by job size, and the GPUs they asked in all: a policy that places fewer groups
// may place more GPUs (larger jobs).
std::string FormatBySize(const std::vector<GroupReplayRow>& rows) {
  std::string out = "\n| policy |";
  for (const auto& [gpus, _] : rows.front().by_size) out += fmt::format(" jobs of {} GPUs |", gpus);
  out += " GPUs of the placed groups |\n|---|";
  for (size_t i = 0; i <= rows.front().by_size.size(); ++i) out += "---|";
  out += "\n";
  for (const GroupReplayRow& r : rows) {
    out += fmt::format("| {} |", r.policy);
    for (const auto& [_, c] : r.by_size) out += fmt::format(" {} of {} |", c.placed, c.arrivals);
    out += fmt::format(" {} |\n", r.GpusPlaced());
  }
  return out;
}

}  // namespace

std::string FormatGroupReplay(const GroupReplayOptions& o, const std::vector<GroupReplayRow>& rows) {
  auto pct = [](int64_t a, int64_t b) { return b ? 100.0 * a / b : 0.0; };
  std::string seeds = o.seeds == 1 ? fmt::format("seed {}", o.seed)
                                    : fmt::format("seeds {}..{} (sums)", o.seed, o.seed + o.seeds - 1);
  std::string out = fmt::format("shape {}, mix {}, load {:.2f}, {} churn arrivals, {}\n\n", o.shape, o.mix, o.load,
                                o.churn_arrivals, seeds);
  out += "| policy | groups placed | spanning groups inside one lowest domain | GPUs held by partly placed groups "
         "| unallocated GPUs at capacity | predicted all-reduce GB/s, groups of 2+ members |\n"
         "|---|---|---|---|---|---|\n";
  for (const GroupReplayRow& r : rows) {
    out += fmt::format("| {} | {} of {} ({:.1f}%) | {} of {} ({:.1f}%) | {} ({:.1f}%) | {} ({:.1f}%) | {:.1f} ({}) |\n",
                       r.policy, r.placed, r.arrivals, pct(r.placed, r.arrivals), r.one_domain, r.spanning,
                       pct(r.one_domain, r.spanning), r.partial_gpus, pct(r.partial_gpus, r.capacity), r.unallocated,
                       pct(r.unallocated, r.capacity), r.multi ? r.allreduce_gbps / r.multi : 0.0, r.multi);
  }
  if (o.by_size) out += FormatBySize(rows);
  if (!o.refusals) return out;
  out += "\n| policy | unallocated GPUs at capacity | GPUs refused while arrivals reach capacity: the cluster had "
         "room for the members, domains aside | had not |\n|---|---|---|---|\n";
  for (const GroupReplayRow& r : rows)
    out += fmt::format("| {} | {} | {} | {} |\n", r.policy, r.unallocated, r.refused_with_room, r.refused_without_room);
  return out;
}

}  // namespace topofit::bench
