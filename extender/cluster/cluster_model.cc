#include "extender/cluster/cluster_model.h"

#include <algorithm>
#include <charconv>
#include <mutex>

#include <fmt/format.h>

#include "base/log.h"
#include "extender/k8s/gpu_plan.h"
#include "extender/k8s/topofit_annotations.h"

namespace topofit::cluster {

namespace {

// The inputs of topology resolution; a node whose inputs did not change is not re-resolved.
std::string ResolutionInputs(const k8s::NodeObject& node, const DraNodeGpus* dra) {
  auto get = [](const std::map<std::string, std::string>& m, const char* key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("\x01") : it->second;
  };
  const auto& ann = node.meta.annotations;
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", node.allocatable_gpus,
                     node.allocatable_cpu_milli, node.allocatable_memory_bytes, get(ann, k8s::kTopologyAnnotation),
                     get(node.meta.labels, k8s::kGfdProductLabel), get(node.meta.labels, k8s::kGfdCountLabel),
                     get(node.meta.labels, k8s::kGkeAcceleratorLabel), get(ann, k8s::kGpuUuidsAnnotation),
                     get(ann, k8s::kGpuPciAnnotation), get(ann, k8s::kGpuHealthAnnotation)) +
         (dra ? "\x1f" + dra->Fingerprint() : std::string());
}

// The node's GPU model: its GFD label, GKE's accelerator label, else its DRA devices' productName.
std::string_view GpuProductOf(const k8s::NodeObject& node, const DraNodeGpus* dra) {
  const auto& labels = node.meta.labels;
  if (auto it = labels.find(k8s::kGfdProductLabel); it != labels.end()) return it->second;
  if (auto it = labels.find(k8s::kGkeAcceleratorLabel); it != labels.end()) return it->second;
  if (dra && !dra->gpus.empty()) return dra->gpus[0].product;
  return {};
}

// `decoded` into `out`, or why it is unusable (named by `key`) into `error`; neither when absent.
template <class T>
void Take(const k8s::Decoded<T>& decoded, const char* key, std::optional<T>& out, std::string& error) {
  if (decoded.value) out = *decoded.value;
  if (!decoded.error.empty()) error = fmt::format("{} {}", key, decoded.error);
}

// The holding a bound pod's object describes: its requests, and for a GPU pod its gpu-ids claim,
// plan and observation (or why each is unusable). plan_deadline is left to the caller.
Holding BoundHolding(const k8s::PodObject& pod) {
  Holding h;
  h.uid = pod.meta.uid;
  h.pod = pod.meta.namespace_ + "/" + pod.meta.name;
  h.count = static_cast<int>(std::clamp<int64_t>(pod.gpus, 0, GpuSet::kMaxGpus));
  h.kind = HoldingKind::kBound;
  h.priority = pod.priority;
  h.pod_group = pod.group_ref.pod_group_name;
  h.cpu_milli = pod.cpu_milli;
  h.memory_bytes = pod.memory_bytes;
  h.terminating = pod.meta.deleting;
  if (h.count == 0) return h;
  const k8s::PodGpuAnnotations a = k8s::DecodePodGpuAnnotations(pod);
  std::optional<std::vector<int>> ids;
  Take(a.gpu_ids, k8s::kGpuIdsAnnotation, ids, h.claim_error);
  if (ids) h.claimed = GpuSet::Of(*ids);
  Take(a.plan, k8s::kGpuPlanAnnotation, h.plan, h.plan_error);
  Take(a.actual, k8s::kGpuActualAnnotation, h.actual, h.actual_error);
  return h;
}

}  // namespace

ClusterModel::ClusterModel(ModelOptions options)
    : clock_(options.clock ? options.clock : SystemClock::Get()),
      options_(options),
      resolver_(&registry_),
      pending_(clock_, options.pending_capacity, options.pending_ttl),
      waits_(clock_),
      group_members_(clock_, GroupMembers::kDefaultCapacity, options.pending_ttl) {}

ClusterModel::~ClusterModel() = default;

// ---------------------------------------------------------------------------------------------------
// Writers

void ClusterModel::ApplyNode(const k8s::NodeObject& node, const DraNodeGpus* dra) {
  const std::string& name = node.meta.name;
  if (name.empty()) return;
  std::string inputs = ResolutionInputs(node, dra);
  bool same_topology = false;
  {
    std::shared_lock lock(nodes_mu_);
    auto it = node_inputs_.find(name);
    if (it != node_inputs_.end() && it->second == inputs && nodes_.count(name)) {
      auto labels = node_labels_.find(name);
      if (labels != node_labels_.end() && labels->second == node.meta.labels) return;
      same_topology = true;  // Only the labels changed.
    }
  }
  if (same_topology) {
    std::unique_lock lock(nodes_mu_);
    node_labels_.insert_or_assign(name, node.meta.labels);
    node_generation_.fetch_add(1, std::memory_order_release);
    return;
  }
  ResolvedTopology spec = resolver_.Resolve(node, dra);  // Outside the lock: parsing may take a while.
  // Once per node and change of what it reports (an unchanged node returned above).
  for (const std::string& w : spec.warnings) Log(LogLevel::kWarn, "node warning", {{"node", name}, {"detail", w}});
  auto fresh = std::make_shared<NodeState>(
      name, std::move(spec), NodeResources{node.allocatable_cpu_milli, node.allocatable_memory_bytes},
      GpuProductOf(node, dra));
  std::unique_lock lock(nodes_mu_);
  auto it = nodes_.find(name);
  if (it != nodes_.end()) {
    for (Holding& h : it->second->Holdings()) fresh->Upsert(std::move(h));
    DetachFreeCounterLocked(*it->second);
    fresh->AssignSlot(it->second->slot());
    AttachFreeCounterLocked(*fresh);
    by_name_.Put(fresh.get());
    it->second = std::move(fresh);
  } else {
    std::vector<Holding> parked;
    {
      std::lock_guard ilock(index_mu_);
      if (auto p = parked_.find(name); p != parked_.end()) {
        parked = std::move(p->second);
        parked_.erase(p);
      }
    }
    for (Holding& h : parked) fresh->Upsert(std::move(h));
    if (free_slots_.empty()) {
      fresh->AssignSlot(slot_bound_++);
    } else {
      fresh->AssignSlot(free_slots_.back());
      free_slots_.pop_back();
    }
    AttachFreeCounterLocked(*fresh);
    by_name_.Put(fresh.get());
    nodes_.emplace(name, std::move(fresh));
  }
  node_inputs_.insert_or_assign(name, std::move(inputs));
  node_labels_.insert_or_assign(name, node.meta.labels);
  node_generation_.fetch_add(1, std::memory_order_release);
}

void ClusterModel::AttachFreeCounterLocked(NodeState& node) {
  if (!node.topology()) return;
  auto& counter = free_by_product_[node.product_id()];
  if (!counter) counter = std::make_unique<std::atomic<int64_t>>(0);
  node.AttachFreeCounter(counter.get(), &free_changes_);
  ++node_types_[{node.topology(), node.usable().mask(), node.product_id()}];
}

void ClusterModel::DetachFreeCounterLocked(NodeState& node) {
  if (!node.topology()) return;
  node.DetachFreeCounter();
  auto it = node_types_.find({node.topology(), node.usable().mask(), node.product_id()});
  if (it != node_types_.end() && --it->second == 0) node_types_.erase(it);
}

void ClusterModel::DeleteNode(std::string_view name) {
  std::unique_lock lock(nodes_mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  std::vector<Holding> holdings = it->second->Holdings();
  DetachFreeCounterLocked(*it->second);
  free_slots_.push_back(it->second->slot());
  std::string key(name);
  by_name_.Erase(name);
  nodes_.erase(it);
  node_inputs_.erase(key);
  node_labels_.erase(key);
  node_generation_.fetch_add(1, std::memory_order_release);
  std::lock_guard ilock(index_mu_);
  for (Holding& h : holdings) {
    if (h.kind == HoldingKind::kReserved) {
      pods_.erase(h.uid);
      continue;
    }
    // The pod may outlive the node object (re-registration); keep it for when the node returns.
    parked_[key].push_back(std::move(h));
  }
}

void ClusterModel::ApplyPod(const k8s::PodObject& pod) {
  const std::string& uid = pod.meta.uid;
  if (uid.empty()) return;
  // A terminating pod (deletionTimestamp) still holds its GPUs: kubelet frees them only when the
  // pod is terminal or gone. Only a pending one is dropped.
  if (pod.terminated() || (pod.meta.deleting && pod.node_name.empty()) || (pod.gpus <= 0 && pod.node_name.empty())) {
    DeletePod(uid);
    return;
  }
  NoteGroupMember(pod);
  if (pod.node_name.empty()) {
    pending_.Put(MakePodRequest(pod));
    return;
  }
  pending_.Erase(uid);
  waits_.Forget(uid);
  Holding h = BoundHolding(pod);
  if (h.plan || !h.claimed.empty()) h.plan_deadline = clock_->Now() + options_.plan_ttl;
  std::shared_lock lock(nodes_mu_);
  PutBoundLocked(pod.node_name, std::move(h));
}

void ClusterModel::PutBoundLocked(const std::string& node, Holding h) {
  const std::string& uid = h.uid;
  std::optional<PodLocation> old;
  {
    std::lock_guard ilock(index_mu_);
    if (auto it = pods_.find(uid); it != pods_.end()) old = it->second;
  }
  if (old && old->node != node) DetachPodLocked(uid, /*reservations_only=*/false);
  if (auto it = nodes_.find(node); it != nodes_.end()) {
    it->second->Upsert(h);
    std::lock_guard ilock(index_mu_);
    pods_.insert_or_assign(uid, PodLocation{node, h.pod});
    uid_by_pod_.insert_or_assign(h.pod, uid);
  } else {
    std::lock_guard ilock(index_mu_);
    auto& list = parked_[node];
    auto p = std::find_if(list.begin(), list.end(), [&](const Holding& o) { return o.uid == uid; });
    if (p == list.end()) {
      list.push_back(h);
    } else {
      *p = h;
    }
    pods_.insert_or_assign(uid, PodLocation{node, h.pod});
    uid_by_pod_.insert_or_assign(h.pod, uid);
  }
}

void ClusterModel::DeletePod(std::string_view uid) {
  pending_.Erase(uid);
  group_members_.Erase(uid);
  waits_.Forget(uid);
  std::shared_lock lock(nodes_mu_);
  DetachPodLocked(std::string(uid), /*reservations_only=*/false);
}

void ClusterModel::RemoveFromIndexLocked(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  if (auto p = uid_by_pod_.find(it->second.pod); p != uid_by_pod_.end() && p->second == uid) uid_by_pod_.erase(p);
  pods_.erase(it);
}

void ClusterModel::DetachPodLocked(const std::string& uid, bool reservations_only) {
  std::optional<PodLocation> loc;
  {
    std::lock_guard ilock(index_mu_);
    if (auto it = pods_.find(uid); it != pods_.end()) loc = it->second;
  }
  if (!loc) return;
  bool removed = false;
  if (auto it = nodes_.find(loc->node); it != nodes_.end()) {
    removed = reservations_only ? it->second->ReleaseReservation(uid) : it->second->Remove(uid);
  }
  std::lock_guard ilock(index_mu_);
  if (!reservations_only) {
    if (auto p = parked_.find(loc->node); p != parked_.end()) {
      auto& list = p->second;
      auto before = list.size();
      std::erase_if(list, [&](const Holding& h) { return h.uid == uid; });
      removed |= list.size() != before;
      if (list.empty()) parked_.erase(p);
    }
  }
  if (removed || !reservations_only) RemoveFromIndexLocked(uid);
}

// ---------------------------------------------------------------------------------------------------
// Bind support

Result<GpuSet> ClusterModel::Reserve(const PodRequest& pod, std::string_view node, const NodeState::Chooser& choose) {
  if (pod.gpus <= 0) return Error{"no GPUs requested"};
  if (pod.uid.empty()) return Error{"pod has no UID"};
  const TimePoint now = clock_->Now();
  std::shared_lock lock(nodes_mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return Error{"unknown node"};
  NodeState& target = *it->second;
  if (now >= target.next_expiry()) ExpireNode(target, now);

  std::optional<PodLocation> old;
  {
    std::lock_guard ilock(index_mu_);
    if (auto p = pods_.find(pod.uid); p != pods_.end()) old = p->second;
  }
  if (old && old->node != node) {
    // A new attempt on another node: the old reservation is stale. A bound pod stays where it is.
    auto other = nodes_.find(old->node);
    if (other != nodes_.end()) {
      auto h = other->second->Find(pod.uid);
      if (h && h->kind == HoldingKind::kBound) {
        return Error{fmt::format("pod is already bound to node {}", old->node)};
      }
    }
    DetachPodLocked(pod.uid, /*reservations_only=*/true);
  }
  std::string key = pod.key();
  auto r = target.Reserve(pod, now + options_.reservation_ttl, choose);
  if (r.ok()) {
    std::lock_guard ilock(index_mu_);
    pods_.insert_or_assign(pod.uid, PodLocation{std::string(node), key});
    uid_by_pod_.insert_or_assign(key, pod.uid);
  }
  return r;
}

Status ClusterModel::Confirm(std::string_view uid) {
  std::shared_lock lock(nodes_mu_);
  std::optional<PodLocation> loc;
  {
    std::lock_guard ilock(index_mu_);
    if (auto it = pods_.find(uid); it != pods_.end()) loc = it->second;
  }
  if (loc) {
    if (auto it = nodes_.find(loc->node); it != nodes_.end() && it->second->Confirm(uid)) return Status::Ok();
  }
  return Error{fmt::format("no reservation for pod {} (expired or released)", uid)};
}

Status ClusterModel::Release(std::string_view uid) {
  std::shared_lock lock(nodes_mu_);
  DetachPodLocked(std::string(uid), /*reservations_only=*/true);
  return Status::Ok();
}

void ClusterModel::ExpireNode(const NodeState& node, TimePoint now) const {
  std::vector<std::string> expired;
  // NodeStates are never created const; readers see them as const only to keep plugins read-only.
  const_cast<NodeState&>(node).Expire(now, &expired);
  if (expired.empty()) return;
  auto* self = const_cast<ClusterModel*>(this);
  std::lock_guard ilock(index_mu_);
  for (const std::string& uid : expired) {
    auto it = self->pods_.find(uid);
    if (it != self->pods_.end() && it->second.node == node.name()) self->RemoveFromIndexLocked(uid);
  }
}

size_t ClusterModel::ExpireReservations() {
  const TimePoint now = clock_->Now();
  std::shared_lock lock(nodes_mu_);
  size_t before = 0, after = 0;
  for (const auto& [name, node] : nodes_) {
    if (now < node->next_expiry()) continue;
    for (const Holding& h : node->Holdings()) before += h.kind == HoldingKind::kReserved;
    ExpireNode(*node, now);
    for (const Holding& h : node->Holdings()) after += h.kind == HoldingKind::kReserved;
  }
  return before - after;
}

// ---------------------------------------------------------------------------------------------------
// Readers

ClusterModel::Reader::Reader(const ClusterModel* model)
    : model_(model), lock_(model->nodes_mu_), now_(model->clock_->Now()) {}

FreeGpus ClusterModel::Reader::FreeByProduct() const {
  FreeGpus out;
  for (const auto& [product, count] : model_->free_by_product_) out.Add(product, count->load(std::memory_order_relaxed));
  for (const auto& [type, nodes] : model_->node_types_)
    out.types.push_back({std::get<0>(type), GpuSet(std::get<1>(type)), std::get<2>(type)});
  return out;
}

void ClusterModel::Reader::Expire(const NodeState& node) const { model_->ExpireNode(node, now_); }

const NodeState* ClusterModel::Reader::Find(std::string_view name) const {
  const NodeState* node = model_->by_name_.Find(name);
  if (node) MaybeExpire(*node);
  return node;
}

}  // namespace topofit::cluster
