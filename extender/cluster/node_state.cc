#include "extender/cluster/node_state.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

namespace topofit::cluster {

std::atomic<uint64_t> NodeState::next_seq_{1};

std::string_view ToString(HoldState state) {
  switch (state) {
    case HoldState::kPlanned: return "planned";
    case HoldState::kInUse: return "in-use";
    case HoldState::kForeign: return "foreign";
  }
  return "?";
}

std::string_view ToString(GpuState state) {
  switch (state) {
    case GpuState::kFree: return "free";
    case GpuState::kPlanned: return "planned";
    case GpuState::kInUse: return "in-use";
    case GpuState::kForeign: return "foreign";
    case GpuState::kUnhealthy: return "unhealthy";
    case GpuState::kUnusable: return "unusable";
  }
  return "?";
}

std::string_view ToString(HoldingKind kind) {
  switch (kind) {
    case HoldingKind::kBound: return "bound";
    case HoldingKind::kReserved: return "reserved";
    case HoldingKind::kConfirmed: return "confirmed";
  }
  return "?";
}

namespace {
struct ProductRegistry {
  std::mutex mu;
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::string> names{""};
};
ProductRegistry& Products() {
  static ProductRegistry* r = new ProductRegistry();  // Never destroyed: ids outlive every model.
  return *r;
}
}  // namespace

uint32_t GpuProductId(std::string_view product) {
  if (product.empty()) return 0;
  ProductRegistry& r = Products();
  std::lock_guard lock(r.mu);
  auto [it, added] = r.ids.try_emplace(std::string(product), uint32_t(r.names.size()));
  if (added) r.names.emplace_back(product);
  return it->second;
}

std::string GpuProductName(uint32_t id) {
  ProductRegistry& r = Products();
  std::lock_guard lock(r.mu);
  return id < r.names.size() ? r.names[id] : std::string();
}

NodeState::NodeState(std::string name, ResolvedTopology spec, NodeResources allocatable, std::string_view gpu_product)
    : free_(spec.usable.mask()),
      next_expiry_(kNever),
      usable_(spec.usable),
      topology_(spec.topology.get()),
      name_size_(static_cast<uint32_t>(name.size())),
      product_id_(GpuProductId(gpu_product)),
      allocatable_(allocatable),
      name_(std::move(name)),
      spec_(std::move(spec)) {
  if (name_.size() <= kInlineName) std::copy(name_.begin(), name_.end(), name_inline_);
  static_assert(sizeof(std::atomic<uint64_t>) * 2 + sizeof(GpuSet) + sizeof(void*) + 2 * sizeof(uint32_t) + kInlineName +
                        3 * sizeof(int64_t) + sizeof(NodeResources) <= 128,
                "the hot and warm fields must fit the two lines FindAll prefetches");
}

void NodeState::AttachFreeCounter(std::atomic<int64_t>* counter, FreeChangeLog* changes) {
  std::lock_guard lock(mu_);
  if (free_counter_) free_counter_->fetch_sub(free().size(), std::memory_order_relaxed);
  free_counter_ = counter;
  free_changes_ = changes;
  if (free_counter_) free_counter_->fetch_add(free().size(), std::memory_order_relaxed);
}

void NodeState::DetachFreeCounter() { AttachFreeCounter(nullptr); }

bool NodeState::PlanMayExpire(const Holding& h) const {
  return spec_.observed && h.kind == HoldingKind::kBound && h.count > 0 && h.observed.empty() && !h.plan_expired &&
         (h.plan || !h.claimed.empty()) && h.plan_deadline != TimePoint::max();
}

void NodeState::Upsert(Holding h) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(holdings_.begin(), holdings_.end(), [&](const Holding& o) { return o.uid == h.uid; });
  if (it == holdings_.end()) {
    h.seq = next_seq_.fetch_add(1);
    h.gpus = GpuSet();
    h.unknown_identity = false;
    holdings_.push_back(std::move(h));
  } else {
    if (h.kind == HoldingKind::kBound && it->kind != HoldingKind::kBound && h.claimed.empty() && !h.plan) {
      h.claimed = it->claimed;  // Our bind chose them; the annotation has not arrived (yet).
    }
    // The plan's deadline runs from when the model first saw it; an expired plan stays dropped.
    if (it->plan_deadline < h.plan_deadline) h.plan_deadline = it->plan_deadline;
    if (it->plan == h.plan && it->claimed == h.claimed) h.plan_expired = it->plan_expired;
    if (it->kind == h.kind && it->claimed == h.claimed && it->count == h.count && it->priority == h.priority &&
        it->pod == h.pod && it->pod_group == h.pod_group && it->claim_error == h.claim_error && it->cpu_milli == h.cpu_milli &&
        it->memory_bytes == h.memory_bytes && it->plan == h.plan && it->actual == h.actual &&
        it->plan_error == h.plan_error && it->actual_error == h.actual_error && it->terminating == h.terminating &&
        it->plan_deadline == h.plan_deadline) {
      return;  // Nothing changed (status update, re-list).
    }
    h.seq = it->seq;
    h.gpus = it->unknown_identity ? it->gpus : GpuSet();
    h.unknown_identity = it->unknown_identity;
    *it = std::move(h);
  }
  RecountLocked();
}

bool NodeState::Remove(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(holdings_.begin(), holdings_.end(), [&](const Holding& o) { return o.uid == uid; });
  if (it == holdings_.end()) return false;
  holdings_.erase(it);
  RecountLocked();
  return true;
}

void NodeState::Expire(TimePoint now, std::vector<std::string>* expired) {
  std::lock_guard lock(mu_);
  bool any = false;
  for (auto it = holdings_.begin(); it != holdings_.end();) {
    if (PlanMayExpire(*it) && it->plan_deadline <= now) {
      it->plan_expired = true;
      any = true;
    }
    if (it->kind == HoldingKind::kReserved && it->expires <= now) {
      if (expired) expired->push_back(it->uid);
      it = holdings_.erase(it);
      any = true;
    } else {
      ++it;
    }
  }
  if (any) RecountLocked();
}

Result<GpuSet> NodeState::Reserve(const PodRequest& pod, TimePoint expires, const Chooser& choose) {
  const std::string& uid = pod.uid;
  const int count = pod.gpus;
  std::lock_guard lock(mu_);
  for (Holding& h : holdings_) {
    if (h.uid != uid) continue;
    if (h.kind == HoldingKind::kReserved && h.expires < expires) {
      h.expires = expires;  // A retried bind keeps its GPUs a little longer.
      RecountLocked();
    }
    return h.gpus;
  }
  const GpuSet free = GpuSet(free_.load(std::memory_order_acquire));
  std::optional<GpuSet> chosen = choose(*this, free);
  if (!chosen) return Error{"no free set"};
  if (!chosen->IsSubsetOf(free) || chosen->size() != count) {
    // The chooser saw a different state or broke its contract; never grant such a set.
    return Error{fmt::format("internal: chosen GPUs {} are not {} free GPUs of {}", chosen->ToString(), count,
                             free.ToString())};
  }
  Holding h;
  h.uid = uid;
  h.pod = pod.key();
  h.count = count;
  h.claimed = *chosen;
  h.kind = HoldingKind::kReserved;
  h.priority = pod.priority;
  h.cpu_milli = pod.cpu_milli;
  h.memory_bytes = pod.memory_bytes;
  h.expires = expires;
  h.seq = next_seq_.fetch_add(1);
  holdings_.push_back(std::move(h));
  RecountLocked();
  return *chosen;
}

bool NodeState::Confirm(std::string_view uid) {
  std::lock_guard lock(mu_);
  for (Holding& h : holdings_) {
    if (h.uid != uid) continue;
    if (h.kind == HoldingKind::kReserved) {
      h.kind = HoldingKind::kConfirmed;
      RecountLocked();
    }
    return true;
  }
  return false;
}

bool NodeState::ReleaseReservation(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(holdings_.begin(), holdings_.end(), [&](const Holding& o) { return o.uid == uid; });
  if (it == holdings_.end() || it->kind == HoldingKind::kBound) return false;
  holdings_.erase(it);
  RecountLocked();
  return true;
}

std::vector<Holding> NodeState::Holdings() const {
  std::lock_guard lock(mu_);
  return holdings_;
}

std::optional<Holding> NodeState::Find(std::string_view uid) const {
  std::lock_guard lock(mu_);
  for (const Holding& h : holdings_)
    if (h.uid == uid) return h;
  return std::nullopt;
}

std::vector<GpuStateInfo> NodeState::GpuStates() const {
  const int count = topology_ ? topology_->gpu_count() : 0;
  std::vector<GpuStateInfo> out(count);
  std::lock_guard lock(mu_);
  for (int g = 0; g < count; ++g) {
    GpuStateInfo& s = out[g];
    s.index = g;
    const int gpu = spec_.shared.GpuOf(g);  // g itself unless the node shares its GPUs.
    s.gpu = gpu;
    s.device = spec_.shared.DeviceName(g);
    if (gpu < static_cast<int>(spec_.uuids.size())) s.uuid = spec_.uuids[gpu];
    if (gpu < static_cast<int>(spec_.pci_bus_ids.size())) s.pci_bus_id = spec_.pci_bus_ids[gpu];
    const Holding* holder = nullptr;
    for (const Holding& h : holdings_) {
      if (h.gpus.contains(g) || h.observed.contains(g)) {
        holder = &h;
        break;
      }
    }
    if (spec_.unhealthy.contains(gpu)) {
      s.state = GpuState::kUnhealthy;
    } else if (!usable_.contains(g)) {
      s.state = GpuState::kUnusable;
    } else if (!holder) {
      s.state = GpuState::kFree;
    } else {
      s.state = holder->state == HoldState::kInUse     ? GpuState::kInUse
                : holder->state == HoldState::kForeign ? GpuState::kForeign
                                                       : GpuState::kPlanned;
    }
    if (!holder) continue;
    s.pod = holder->pod;
    s.uid = holder->uid;
    s.terminating = holder->terminating;
    s.guessed = holder->unknown_identity && !holder->observed.contains(g);
    for (const auto& [name, gpus] : holder->containers)
      if (gpus.contains(g)) s.container = name;  // The last: an app container reusing an init container's GPU.
  }
  return out;
}

std::vector<std::string> NodeState::Warnings() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out = spec_.warnings;
  out.insert(out.end(), holding_warnings_.begin(), holding_warnings_.end());
  return out;
}

}  // namespace topofit::cluster
