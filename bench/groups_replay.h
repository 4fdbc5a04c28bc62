#pragma once
// The groups replay: one stream of group arrivals (groups_workload.h) played through each way of
// placing groups (groups_policies.h) on the same labelled cluster, and the table of docs/groups.md.
//
// Protocol, per policy, from an empty cluster:
//   churn  `churn_arrivals` arrivals; a group placed (wholly or, without a gang, partly) leaves after
//          its lifetime in arrivals. Lifetimes are exponential with mean load x capacity / mean GPUs
//          per job, so the offered load is `load` of the cluster (Little's law). A group that does not
//          fit is refused, not queued (the replay measures placement, not queueing).
//   fill   departures stop; arrivals go on until the GPUs they ask reach the GPUs free when the fill
//          began ("arrivals reach capacity"), as the openb replay's unallocated-GPU figure is taken.
// Counted over both phases:
//   placed             groups given every member (of `arrivals`).
//   one_domain         of the placed groups that span nodes and fit one domain of the shape's lowest
//                      network level (block, NVLink domain), those inside one.
//   partial_gpus       GPUs held, at the end, by groups given some members but not all (no-gang only:
//                      its pods wait on nodes for the rest, holding their GPUs).
//   unallocated        GPUs free at the end of the fill.
//   allreduce_gbps     summed over the placed groups of 2 or more members (`multi`): the all-reduce
//                      bandwidth predicted from the levels the group crosses (PredictedAllReduceGbps).
// The cluster model is built once (ClusterModel, its labels read into a DomainMap, ReadGroupNodes);
// plans are then played forward on a copy of its free GPUs (groups::Take), not written to the model.
// Deterministic for a seed. With several seeds, each policy's counts are the sums over the runs.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/groups_workload.h"
#include "extender/cluster/cluster_model.h"
#include "extender/groups/group_nodes.h"
#include "extender/groups/group_planner.h"
#include "extender/groups/group_shapes.h"
#include "extender/groups/network_domains.h"

namespace topofit::bench {

struct GroupReplayOptions {
  std::string shape = "h100-spine";
  std::string mix = "helios-fit";
  double load = 0.9;
  int churn_arrivals = 2000;
  uint64_t seed = 1;
  int seeds = 1;  // Runs seed, seed + 1, ...; rows add their counts up.
  double group_half_life = groups::GroupShapeOptions{}.half_life;  // topofit's estimate of group shapes.
  bool pod_domain_loss = true;  // topofit's pods of no group ordered by the domain loss (scoring.domainLoss).
  bool refusals = false;        // FormatGroupReplay adds the fill's refusals, by cause.
  bool by_size = false;         // FormatGroupReplay adds the groups placed by job size (GPUs).
};

// The q-quantile (0 <= q <= 1) of `sorted`, ascending: the element at q x size, the last for q = 1.
// T{} when empty.
template <typename T>
T QuantileOf(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return T{};
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()))];
}

// One seed's counts of the two targets (groups_spread.h).
struct SeedCounts {
  int64_t unallocated = 0;
  int64_t one_domain = 0;
  int64_t gpus_placed = 0;  // The GPUs of the groups given every member.
};

struct GroupReplayRow {
  std::string policy;
  bool gang = true;  // The policy places a group whole or not at all (GroupPolicy::gang).
  int arrivals = 0;
  int placed = 0;
  int spanning = 0;    // Placed groups on more than one node that fit one lowest-level domain.
  int one_domain = 0;  // Of those, inside one.
  int64_t partial_gpus = 0;
  int64_t unallocated = 0;
  int64_t capacity = 0;
  int multi = 0;              // Placed groups of 2 or more members.
  double allreduce_gbps = 0;  // Summed over them.
  // The GPUs of the arrivals refused while arrivals reach capacity, by whether the cluster then had
  // room for every member on some node, its domains aside (a refusal no placement of this moment
  // could have avoided, when it had not). What is unallocated at capacity is made of these refusals.
  int64_t refused_with_room = 0;
  int64_t refused_without_room = 0;
  std::vector<SeedCounts> by_seed;  // Each seed's counts, in seed order.
  // By the job's GPUs: arrivals, and those given every member (both phases).
  struct SizeCounts {
    int arrivals = 0;
    int placed = 0;
  };
  std::map<int, SizeCounts> by_size;
  int64_t GpusPlaced() const;  // The GPUs of the groups given every member: by_size's placed x GPUs.
};

// The bus bandwidth a ring all-reduce over `members` can reach, GB/s a GPU one way: its slowest hop.
// Members on one node, or inside one domain of the shape's NVLink level, talk over NVLink
// (shape.nvlink_gbps); members beyond it over the network (shape.nic_gbps: each GPU's NIC, the fabric
// non-blocking, so crossing a block or a spine costs no more than crossing nodes). `map` holds the
// shape's labels; `levels` are ShapeLevels. A model of the levels crossed, not a measurement.
double PredictedAllReduceGbps(const ClusterShape& shape, const groups::DomainMap& map, const std::vector<int>& levels,
                              const std::vector<groups::MemberPlan>& members);

// The cluster a replay runs on: the shape's nodes in a model, their domains, every GPU free, and the
// mean lifetime that offers options.load. Filled in place (`empty` points into `map`).
struct ReplayCluster {
  ClusterShape shape;
  SizeMix mix;
  groups::DomainLevels levels = groups::DomainLevels::Defaults();
  std::unique_ptr<cluster::ClusterModel> model = std::make_unique<cluster::ClusterModel>();
  groups::DomainMap map;
  groups::GroupNodes empty;
  std::vector<int> shape_levels;  // ShapeLevels(shape, levels).
  double mean_lifetime = 0;       // In arrivals: load x capacity / mean GPUs per job.
};
// Errors: an unknown shape or mix, load <= 0, churn arrivals < 0, seeds < 1, half-life < 1.
Status BuildReplayCluster(const GroupReplayOptions& options, ReplayCluster& out);

Result<std::vector<GroupReplayRow>> RunGroupReplay(const GroupReplayOptions& options);

// The GPUs free on `nodes` (usable ones only), and the GPUs `members` take.
int64_t FreeGpus(const groups::GroupNodes& nodes);
int64_t GpusOf(std::span<const groups::MemberPlan> members);

class GroupPolicy;
// A group through policy.Place, a pod of no group (a.single) through policy.PlacePod.
std::vector<groups::MemberPlan> PlaceArrival(GroupPolicy& policy, const groups::GroupNodes& nodes,
                                             const GroupArrival& a);

// A markdown table, headed by the run's parameters.
std::string FormatGroupReplay(const GroupReplayOptions& options, const std::vector<GroupReplayRow>& rows);

}  // namespace topofit::bench
