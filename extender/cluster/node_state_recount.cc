// NodeState::RecountLocked: which GPUs each holding of a node is counted as holding (node_state.h's
// invariant; docs/node-states.md), in three passes of decreasing trust - observed sets, then claims,
// then GPUs of unknown identity placed pessimistically - and the node's free GPUs, next expiry, CPU
// and memory published from the result.
#include "extender/cluster/node_state.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace topofit::cluster {

namespace {

std::string GpuList(GpuSet s) { return s.size() == 1 ? "GPU " + s.ToString() : "GPUs " + s.ToString(); }

// Placed by topofit: a plan, a gpu-ids claim (valid or not), or our own bind in flight.
bool ByTopofit(const Holding& h) {
  return h.plan || !h.claimed.empty() || !h.claim_error.empty() || h.kind != HoldingKind::kBound;
}

struct ResolvedAssignment {
  GpuSet all;
  std::vector<std::pair<std::string, GpuSet>> containers;
};

// Maps an assignment's UUIDs to the node's GPU indices. Errors name what does not fit.
Result<ResolvedAssignment> ResolveAssignment(const ResolvedTopology& spec, const std::string& node,
                                             const k8s::GpuAssignment& a) {
  if (a.node != node) return Error{fmt::format("names node {}, not {}", a.node, node)};
  if (spec.uuids.empty()) return Error{fmt::format("cannot be read: the node publishes no {}", k8s::kGpuUuidsAnnotation)};
  ResolvedAssignment out;
  for (const auto& [name, uuids] : a.containers) {
    GpuSet mine;
    for (const std::string& uuid : uuids) {
      int i = spec.DeviceIndexOf(uuid);
      if (i < 0) return Error{fmt::format("names {}, which is not one of the node's GPUs", uuid)};
      mine.Add(i);
    }
    out.all = out.all | mine;
    out.containers.emplace_back(name, mine);
  }
  return out;
}

// One recount of a node's holdings, under NodeState::mu_. The constructor clears what the last
// recount computed; then the passes run in order, each counting what it can trust and leaving the
// rest to the next. `held` only grows, and no GPU is counted for two holdings.
class Recount {
 public:
  Recount(const ResolvedTopology& spec, const std::string& node, std::vector<Holding>& holdings,
          std::vector<std::string>& warnings);
  // Pass 1: observed sets (actual beats plan), first come first served.
  void CountObserved();
  // Pass 2: claims - the plan (by UUID) where the node has a UUID map, else gpu-ids.
  void CountClaims();
  // Pass 3: GPUs of unknown identity, pessimistically the best set still free (the GPUs whose loss
  // hurts most); over-commitment is warned about.
  void PlaceUnknown();
  GpuSet held() const { return held_; }

 private:
  void CountObserved(size_t i);
  void CountClaim(size_t i);
  // The GPUs h claims, and in `error` why they cannot be taken ("" when they can): its plan
  // resolved by UUID where the node has a UUID map (filling h.containers), else its gpu-ids.
  GpuSet ReadClaim(Holding& h, std::string& error) const;
  // A claim not honoured: the holding's GPUs are placed in pass 3, `why` is its conflict.
  static void Refuse(Holding& h, std::string why);
  // A claim naming GPUs already held: the rest stays the holding's, the lost ones go to pass 3.
  void KeepUncontested(size_t i, GpuSet claim);
  // The pod of another holding with known GPUs among `gpus`; "" when none.
  std::string HolderOf(GpuSet gpus, size_t except) const;
  void PlaceUnknown(size_t i);
  // `need` GPUs of `free` for a holding of unknown identity: `previous` (its last guess) when still
  // free, so that guesses do not wander; else the best set of that size; else the lowest indices.
  GpuSet Guess(GpuSet free, int need, GpuSet previous) const;

  const ResolvedTopology& spec_;
  const std::string& node_;
  std::vector<Holding>& holdings_;
  std::vector<std::string>& warnings_;
  const GpuSet usable_;
  GpuSet held_;
  std::vector<GpuSet> fixed_;   // GPUs of known identity counted for each holding.
  std::vector<bool> settled_;   // Observed or claim honoured.
  std::vector<GpuSet> hint_;    // The previous guess, kept if still free.
  int overcommitted_ = 0;       // GPUs held beyond the usable ones.
};

Recount::Recount(const ResolvedTopology& spec, const std::string& node, std::vector<Holding>& holdings,
                 std::vector<std::string>& warnings)
    : spec_(spec),
      node_(node),
      holdings_(holdings),
      warnings_(warnings),
      usable_(spec.usable),
      fixed_(holdings.size()),
      settled_(holdings.size(), false),
      hint_(holdings.size()) {
  for (size_t i = 0; i < holdings_.size(); ++i) {
    Holding& h = holdings_[i];
    hint_[i] = h.unknown_identity ? h.gpus : GpuSet();
    h.conflict.clear();
    h.unknown_identity = false;
    h.gpus = GpuSet();
    h.observed = GpuSet();
    h.containers.clear();
    h.state = ByTopofit(h) ? HoldState::kPlanned : HoldState::kForeign;
  }
}

void Recount::CountObserved() {
  for (size_t i = 0; i < holdings_.size(); ++i) CountObserved(i);
}

void Recount::CountObserved(size_t i) {
  Holding& h = holdings_[i];
  if (h.count == 0) return;
  if (!h.actual_error.empty()) {
    warnings_.push_back(fmt::format("pod {} {}; ignored", h.pod, h.actual_error));
    return;
  }
  if (!h.actual) return;
  auto r = ResolveAssignment(spec_, node_, *h.actual);
  if (!r.ok()) {
    warnings_.push_back(fmt::format("pod {} {} {}; ignored", h.pod, k8s::kGpuActualAnnotation, r.error()));
    return;
  }
  GpuSet mine = r->all & usable_;  // An unhealthy GPU stays the pod's but nobody else can get it.
  if (mine.Intersects(held_)) {
    warnings_.push_back(fmt::format("pod {} {} names {} also observed for another pod; ignored", h.pod,
                                    k8s::kGpuActualAnnotation, GpuList(mine & held_)));
    return;
  }
  h.observed = r->all;
  h.containers = std::move(r->containers);
  if (h.state == HoldState::kPlanned) h.state = HoldState::kInUse;
  fixed_[i] = mine;
  held_ = held_ | mine;
  settled_[i] = r->all.size() >= h.count;
  if (!settled_[i]) {
    h.conflict = fmt::format("{} names {} GPUs but the pod requests {}", k8s::kGpuActualAnnotation, r->all.size(),
                             h.count);
  }
}

void Recount::CountClaims() {
  for (size_t i = 0; i < holdings_.size(); ++i) CountClaim(i);
}

void Recount::CountClaim(size_t i) {
  Holding& h = holdings_[i];
  if (h.count == 0 || !h.observed.empty()) return;
  std::string error;
  const GpuSet claim = ReadClaim(h, error);
  if (!error.empty()) return Refuse(h, std::move(error));
  if (claim.empty()) return;  // No identity claimed: pass 3.
  if (!claim.IsSubsetOf(usable_)) {
    return Refuse(h, fmt::format("names {} but the node's usable GPUs are {}", GpuList(claim - usable_),
                                 usable_.empty() ? "none" : usable_.ToString()));
  }
  if (claim.size() != h.count) {
    return Refuse(h, fmt::format("names {} GPUs ({}) but requests {}", claim.size(), claim.ToString(), h.count));
  }
  if (claim.Intersects(held_)) return KeepUncontested(i, claim);
  fixed_[i] = claim;
  settled_[i] = true;
  held_ = held_ | claim;
}

GpuSet Recount::ReadClaim(Holding& h, std::string& error) const {
  GpuSet claim = h.claimed;
  error = h.claim_error;
  if (h.plan_expired) {
    error = "was not observed on the node in time (plan dropped)";
  } else if (h.plan && !spec_.uuids.empty()) {
    auto r = ResolveAssignment(spec_, node_, *h.plan);
    if (r.ok()) {
      claim = r->all;
      h.containers = std::move(r->containers);
      error.clear();
    } else {
      error = fmt::format("{} {}", k8s::kGpuPlanAnnotation, r.error());
    }
  } else if (!h.plan_error.empty() && claim.empty() && error.empty()) {
    error = h.plan_error;
  }
  return claim;
}

void Recount::Refuse(Holding& h, std::string why) {
  h.conflict = std::move(why);
  h.containers.clear();
}

void Recount::KeepUncontested(size_t i, GpuSet claim) {
  const GpuSet clash = claim & held_;
  holdings_[i].conflict = fmt::format("names {} already held by {}", GpuList(clash), HolderOf(clash, i));
  // The rest of the claim stays the pod's: kubelet gives it what is still available of its plan,
  // and no later plan may name those GPUs.
  fixed_[i] = claim - held_;
  held_ = held_ | fixed_[i];
}

std::string Recount::HolderOf(GpuSet gpus, size_t except) const {
  for (size_t j = 0; j < holdings_.size(); ++j)
    if (j != except && fixed_[j].Intersects(gpus)) return holdings_[j].pod;
  return "";
}

void Recount::PlaceUnknown() {
  for (size_t i = 0; i < holdings_.size(); ++i) PlaceUnknown(i);
  if (overcommitted_ > 0) {
    warnings_.push_back(fmt::format("over-committed: pods hold {} more GPUs than the node's {} usable",
                                    overcommitted_, usable_.size()));
  }
}

void Recount::PlaceUnknown(size_t i) {
  Holding& h = holdings_[i];
  if (settled_[i] || h.count == 0) {
    h.gpus = fixed_[i];
    return;
  }
  h.unknown_identity = true;
  const int need = h.count - fixed_[i].size();
  const GpuSet free = usable_ - held_;
  GpuSet take;
  if (need > free.size()) {
    take = free;
    overcommitted_ += need - free.size();
  } else {
    take = Guess(free, need, hint_[i] - fixed_[i]);
  }
  h.gpus = fixed_[i] | take;
  held_ = held_ | take;
  if (!h.conflict.empty()) {
    warnings_.push_back(fmt::format("pod {} {}; counted as {} GPUs of unknown identity ({})", h.pod, h.conflict,
                                    h.count, h.gpus.ToString()));
  } else {
    warnings_.push_back(fmt::format("pod {} holds {} GPUs of unknown identity (no {}); counted as {}", h.pod,
                                    h.count, k8s::kGpuIdsAnnotation, h.gpus.ToString()));
  }
}

GpuSet Recount::Guess(GpuSet free, int need, GpuSet previous) const {
  if (!previous.empty() && previous.IsSubsetOf(free) && previous.size() == need) return previous;
  std::optional<SetChoice> best;
  if (spec_.topology && need >= 1) best = spec_.topology->selector().Best(free, need);
  if (best) return best->gpus;
  GpuSet take;
  for (int g : free.Indices()) {
    if (take.size() == need) break;
    take.Add(g);
  }
  return take;
}

}  // namespace

void NodeState::RecountLocked() {
  holding_warnings_.clear();
  Recount recount(spec_, name_, holdings_, holding_warnings_);
  recount.CountObserved();
  recount.CountClaims();
  recount.PlaceUnknown();
  PublishLocked(spec_.usable - recount.held());
}

void NodeState::PublishLocked(GpuSet free) {
  Duration::rep next = kNever;
  int64_t cpu = 0, memory = 0;
  for (const Holding& h : holdings_) {
    if (h.kind == HoldingKind::kReserved) next = std::min(next, h.expires.time_since_epoch().count());
    if (PlanMayExpire(h)) next = std::min(next, h.plan_deadline.time_since_epoch().count());
    cpu += h.cpu_milli;
    memory += h.memory_bytes;
  }
  used_cpu_.store(cpu, std::memory_order_release);
  used_memory_.store(memory, std::memory_order_release);
  if (free_counter_)
    free_counter_->fetch_add(free.size() - GpuSet(free_.load(std::memory_order_relaxed)).size(),
                             std::memory_order_relaxed);
  const bool changed = free.mask() != free_.load(std::memory_order_relaxed);
  free_.store(free.mask(), std::memory_order_release);
  next_expiry_.store(next, std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
  if (changed && free_changes_) free_changes_->Record(slot_);  // After the store.
}

}  // namespace topofit::cluster
