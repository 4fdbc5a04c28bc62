#include "bench/groups_queue.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "bench/groups_policies.h"

namespace topofit::bench {

namespace {

// The members a gang must place at once when `missing` of the group's are left.
int RestMin(const groups::GroupSpec& spec, int missing) { return std::min(spec.min_count, missing); }

// A group in the replay: waiting (members_placed < size), or started at `start`.
struct Queued {
  const GroupArrival* arrival = nullptr;
  int arrived = 0;
  std::vector<groups::MemberPlan> members;  // Placed so far (no-gang: some; a gang: none or all).
  int64_t failed_in = -1;  // The departure epoch of its last try that placed nothing.
};

class QueueReplay {
 public:
  QueueReplay(const ReplayCluster& c, GroupPolicy& policy) : c_(c), policy_(policy), nodes_(c.empty) {
    free_ = FreeGpus(nodes_);
  }

  GroupQueueRow Run(const std::vector<GroupArrival>& arrivals, int steps) {
    GroupQueueRow row;
    row.policy = policy_.name();
    row.capacity = c_.shape.gpus();
    row.steps = steps;
    policy_.Start();
    for (int t = 0; t < steps && t < static_cast<int>(arrivals.size()); ++t) {
      Depart(t);
      queue_.push_back(Queued{&arrivals[t], t, {}});
      row.arrivals++;
      TryQueue(t, row);
      for (const Queued& q : queue_)
        row.idle_gpu_steps += GpusOf(q.members);
    }
    for (const Queued& q : queue_) {
      row.waiting++;
      row.waits.push_back(steps - q.arrived);
      GroupQueueRow::SizeWaits& size = row.by_size[q.arrival->total_gpus];
      size.waits.push_back(steps - q.arrived);
      size.waiting++;
      row.partial_gpus += GpusOf(q.members);
    }
    std::sort(row.waits.begin(), row.waits.end());
    return row;
  }

 private:
  void Depart(int t) {
    for (auto it = leaving_.begin(); it != leaving_.end() && it->first <= t; it = leaving_.erase(it)) {
      groups::GiveBack(nodes_, it->second);
      free_ += GpusOf(it->second);
      ++epoch_;
    }
  }
  // Every waiting group in arrival order, placed (or, without a gang, given more members) where it fits.
  void TryQueue(int t, GroupQueueRow& row) {
    for (auto it = queue_.begin(); it != queue_.end();) {
      Queued& q = *it;
      const groups::GroupSpec& spec = q.arrival->spec;
      const int missing = spec.size - static_cast<int>(q.members.size());
      const int needed = policy_.gang() ? RestMin(spec, missing) : 1;  // Members the policy could start with.
      // Skipped: too few free GPUs, or a try that placed nothing since the last departure (GPUs have
      // only been taken since, and on the replay's shapes - any k free GPUs of a node make a set - a
      // group that fitted nowhere then fits nowhere now; the tables are the same without this).
      if (static_cast<int64_t>(needed) * spec.gpus > free_ || q.failed_in == epoch_) {
        ++it;
        continue;
      }
      groups::GroupSpec rest = spec;
      rest.size = missing;
      rest.min_count = RestMin(spec, missing);
      GroupArrival rest_arrival = *q.arrival;
      rest_arrival.spec = rest;
      std::vector<groups::MemberPlan> more = PlaceArrival(policy_, nodes_, rest_arrival);
      if (more.empty()) q.failed_in = epoch_;
      groups::Take(nodes_, more);
      free_ -= GpusOf(more);
      q.members.insert(q.members.end(), more.begin(), more.end());
      if (static_cast<int>(q.members.size()) < spec.size) {
        ++it;
        continue;
      }
      row.started++;
      row.waits.push_back(t - q.arrived);
      row.by_size[q.arrival->total_gpus].waits.push_back(t - q.arrived);
      leaving_.emplace(t + q.arrival->lifetime, std::move(q.members));
      it = queue_.erase(it);
    }
  }

  const ReplayCluster& c_;
  GroupPolicy& policy_;
  groups::GroupNodes nodes_;
  int64_t free_ = 0;  // Free GPUs of nodes_.
  int64_t epoch_ = 0;  // Departures that freed GPUs so far.
  std::vector<Queued> queue_;
  std::multimap<int, std::vector<groups::MemberPlan>> leaving_;  // By the time it leaves.
};

}  // namespace

int GroupQueueRow::WaitAt(double q) const { return QuantileOf(waits, q); }

Result<std::vector<GroupQueueRow>> RunGroupQueue(const GroupReplayOptions& options) {
  ReplayCluster c;
  if (Status st = BuildReplayCluster(options, c); !st.ok()) return Error{st.error()};
  placement::Placer placer;
  groups::GroupShapeOptions expected;
  expected.half_life = options.group_half_life;
  auto policies = AllGroupPolicies(placer, expected, &c.shape, options.pod_domain_loss);
  std::vector<GroupQueueRow> rows(policies.size());
  for (int k = 0; k < options.seeds; ++k) {
    const auto arrivals = GenerateGroups(c.mix, c.shape, c.levels, options.churn_arrivals, c.mean_lifetime,
                                         options.seed + k);
    for (size_t p = 0; p < policies.size(); ++p) {
      GroupQueueRow r = QueueReplay(c, *policies[p]).Run(arrivals, options.churn_arrivals);
      GroupQueueRow& sum = rows[p];
      sum.policy = r.policy;
      sum.arrivals += r.arrivals;
      sum.started += r.started;
      sum.waiting += r.waiting;
      sum.partial_gpus += r.partial_gpus;
      sum.idle_gpu_steps += r.idle_gpu_steps;
      sum.steps += r.steps;
      sum.capacity += r.capacity;
      sum.waits.insert(sum.waits.end(), r.waits.begin(), r.waits.end());
      for (auto& [gpus, w] : r.by_size) {
        GroupQueueRow::SizeWaits& to = sum.by_size[gpus];
        to.waits.insert(to.waits.end(), w.waits.begin(), w.waits.end());
        to.waiting += w.waiting;
      }
    }
  }
  for (GroupQueueRow& r : rows) {
    std::sort(r.waits.begin(), r.waits.end());
    for (auto& [_, w] : r.by_size) std::sort(w.waits.begin(), w.waits.end());
  }
  return rows;
}

namespace {

// Per job size: the waits' p50 / p90 / max, and the groups still waiting at the end.
std::string FormatWaitsBySize(const std::vector<GroupQueueRow>& rows) {
  std::string out = "\nwaits by job size (arrivals): p50 / p90 / max, (still waiting at the end)\n\n| policy |";
  for (const auto& [gpus, _] : rows.front().by_size) out += fmt::format(" jobs of {} GPUs |", gpus);
  out += "\n|---|";
  for (size_t i = 0; i < rows.front().by_size.size(); ++i) out += "---|";
  out += "\n";
  for (const GroupQueueRow& r : rows) {
    out += fmt::format("| {} |", r.policy);
    for (const auto& [gpus, w] : r.by_size) {
      out += w.waits.empty() ? " - |"
                             : fmt::format(" {} / {} / {} ({}) |", QuantileOf(w.waits, 0.5), QuantileOf(w.waits, 0.9),
                                           w.waits.back(), w.waiting);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string FormatGroupQueue(const GroupReplayOptions& o, const std::vector<GroupQueueRow>& rows) {
  auto pct = [](int64_t a, int64_t b) { return b ? 100.0 * a / b : 0.0; };
  std::string seeds = o.seeds == 1 ? fmt::format("seed {}", o.seed)
                                    : fmt::format("seeds {}..{} (waits pooled)", o.seed, o.seed + o.seeds - 1);
  std::string out = fmt::format("queue: shape {}, mix {}, load {:.2f}, {} arrivals, {}\n\n", o.shape, o.mix, o.load,
                                o.churn_arrivals, seeds);
  out += "| policy | groups started | still waiting at the end | wait p50 / p90 / max (arrivals) "
         "| GPUs held idle by partly started groups, mean over the run | at the end |\n|---|---|---|---|---|---|\n";
  for (const GroupQueueRow& r : rows) {
    const double idle = r.steps ? static_cast<double>(r.idle_gpu_steps) / r.steps : 0.0;
    out += fmt::format("| {} | {} of {} ({:.1f}%) | {} | {} / {} / {} | {:.1f} ({:.1f}%) | {} ({:.1f}%) |\n", r.policy,
                       r.started, r.arrivals, pct(r.started, r.arrivals), r.waiting, r.WaitAt(0.5), r.WaitAt(0.9),
                       r.waits.empty() ? 0 : r.waits.back(), idle, r.capacity ? 100.0 * idle * o.seeds / r.capacity : 0.0,
                       r.partial_gpus, pct(r.partial_gpus, r.capacity));
  }
  if (o.by_size) out += FormatWaitsBySize(rows);
  return out;
}

}  // namespace topofit::bench
