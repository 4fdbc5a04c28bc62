#pragma once
// The groups replay with a queue - issue 28's "wait time in a time-ordered replay". The arrivals and
// lifetimes of the churn phase of groups_replay.h, in time: arrival i comes at time i (time counts
// mean inter-arrival times), a group placed at time t leaves at t + its lifetime. A group that does
// not fit waits in one queue in arrival order; at every time step, after that step's departures, the
// queue is tried in order and each waiting group placed as soon as it fits (best-effort FIFO:
// kube-scheduler retrying its pods, Kueue's BestEffortFIFO), the new arrival last. A group whose GPUs
// (no-gang: one member's) exceed the free GPUs is skipped without asking the policy.
// no-gang (kube-scheduler alone) waits member by member: the members that fit take their GPUs at once
// and hold them; the group starts, and its lifetime counts, when its last member is placed.
// Counted over the arrivals of `churn_arrivals` steps; then the replay stops:
//   started        groups given every member by the end.
//   waits          each arrival's wait: to its start, or, still waiting at the end, the wait so far (a
//                  lower bound); p50, p90, max over all arrivals, in mean inter-arrival times.
//   waiting        groups still waiting at the end (not started).
//   partial_gpus   GPUs held at the end by groups given some members but not all (no-gang only).
//   idle_gpu_steps GPUs held by such groups, summed over the steps (after each step's placements):
//                  GPUs doing nothing while their group waits; over steps, the mean held.
//   by_size        the waits and the groups still waiting, by the job's GPUs.
// Deterministic for a seed; with several seeds the counts add up and the waits are pooled.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/groups_replay.h"

namespace topofit::bench {

struct GroupQueueRow {
  std::string policy;
  int arrivals = 0;
  int started = 0;
  int waiting = 0;
  int64_t partial_gpus = 0;
  int64_t idle_gpu_steps = 0;
  int64_t steps = 0;     // Summed over the seeds, as capacity.
  int64_t capacity = 0;
  std::vector<int> waits;  // One per arrival, sorted.
  int WaitAt(double q) const;  // The q-quantile of waits (0 when none).
  // By the job's GPUs: each arrival's wait (sorted), and how many still wait at the end - where a
  // large job starves behind small ones (FormatGroupQueue with options.by_size).
  struct SizeWaits {
    std::vector<int> waits;
    int waiting = 0;
  };
  std::map<int, SizeWaits> by_size;
};

Result<std::vector<GroupQueueRow>> RunGroupQueue(const GroupReplayOptions& options);

// A markdown table, headed by the run's parameters.
std::string FormatGroupQueue(const GroupReplayOptions& options, const std::vector<GroupQueueRow>& rows);

}  // namespace topofit::bench
