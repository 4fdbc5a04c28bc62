#include "extender/cluster/dra_cluster.h"

#include <algorithm>

#include "extender/k8s/gpu_plan.h"

namespace topofit::cluster {
namespace {

k8s::GpuAssignment AssignmentOf(const DraAllocation& a) {
  k8s::GpuAssignment out;
  out.node = a.node;
  out.containers = a.requests;  // Per claim request: kube-scheduler names one per container.
  return out;
}

}  // namespace

void DraCluster::ApplyNode(const k8s::NodeObject& node) {
  std::lock_guard lock(mu_);
  if (node.allocatable_gpus > 0) {  // The device plugin serves it.
    nodes_.erase(node.meta.name);
    applied_.erase(node.meta.name);
    model_.ApplyNode(node);
    return;
  }
  nodes_.insert_or_assign(node.meta.name, node);
  applied_.erase(node.meta.name);  // Apply again: the node object itself changed.
  RefreshNodeLocked(node.meta.name);
}

void DraCluster::DeleteNode(std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = nodes_.find(name); it != nodes_.end()) nodes_.erase(it);
  if (auto it = applied_.find(name); it != applied_.end()) applied_.erase(it);
  model_.DeleteNode(name);
}

void DraCluster::RefreshNodeLocked(const std::string& name) {
  auto node = nodes_.find(name);
  if (node == nodes_.end()) return;
  std::optional<DraNodeGpus> gpus = inventory_.NodeGpus(name);
  std::string fingerprint = gpus ? gpus->Fingerprint() : std::string();
  auto done = applied_.find(name);
  if (done != applied_.end() && done->second == fingerprint) return;
  model_.ApplyNode(node->second, gpus ? &*gpus : nullptr);
  applied_.insert_or_assign(name, std::move(fingerprint));
}

void DraCluster::RefreshAllLocked() {
  for (const auto& [name, node] : nodes_) RefreshNodeLocked(name);
  for (auto& [uid, claim] : claims_) RefreshClaimLocked(claim);
}

k8s::PodObject DraCluster::Pod(const k8s::PodObject& pod) {
  std::lock_guard lock(mu_);
  if (pod.gpus > 0 && !pod.node_name.empty() && !pod.terminated() && nodes_.count(pod.node_name)) {
    pods_.insert_or_assign(pod.meta.uid, pod);
  } else if (auto it = pods_.find(pod.meta.uid); it != pods_.end()) {
    pods_.erase(it);
  }
  k8s::PodObject out = AugmentLocked(pod);
  if (auto c = claim_of_pod_.find(pod.meta.uid); c != claim_of_pod_.end() && !pod.node_name.empty()) {
    claims_.find(c->second)->second.synthetic = false;  // The pod's own object holds the GPUs now.
  }
  return out;
}

void DraCluster::ForgetPod(std::string_view uid) {
  std::lock_guard lock(mu_);
  if (auto it = pods_.find(uid); it != pods_.end()) pods_.erase(it);
}

k8s::PodObject DraCluster::AugmentLocked(const k8s::PodObject& pod) const {
  auto c = claim_of_pod_.find(pod.meta.uid);
  if (c == claim_of_pod_.end() || pod.node_name.empty()) return pod;
  const Claim& claim = claims_.find(c->second)->second;
  if (!claim.allocation || claim.allocation->node != pod.node_name) return pod;
  k8s::PodObject out = pod;
  out.meta.annotations.insert_or_assign(k8s::kGpuActualAnnotation, k8s::EncodeGpuAssignment(AssignmentOf(*claim.allocation)));
  return out;
}

k8s::PodObject DraCluster::ClaimHolding(const Claim& c) const {
  k8s::PodObject p;
  p.meta.uid = c.holder;
  p.meta.namespace_ = c.object.meta.namespace_;
  p.meta.name = c.object.extended_resource && !c.object.owner_pod.name.empty() ? c.object.owner_pod.name
                                                                                 : c.object.meta.name;
  p.node_name = c.allocation->node;
  p.gpus = c.allocation->count;
  p.phase = "Pending";
  p.meta.annotations.emplace(k8s::kGpuActualAnnotation, k8s::EncodeGpuAssignment(AssignmentOf(*c.allocation)));
  return p;
}

void DraCluster::RefreshClaimLocked(Claim& c) {
  std::optional<DraAllocation> now = inventory_.Allocation(c.object);
  const bool same = now.has_value() == c.allocation.has_value() &&
                    (!now || (now->node == c.allocation->node && now->requests == c.allocation->requests));
  if (same && (c.synthetic || pods_.count(c.holder))) return;
  if (c.allocation && (!now || now->node != c.allocation->node || now->count < c.allocation->count))
    freed_.push_back(c.allocation->node);
  c.allocation = std::move(now);
  if (auto pod = pods_.find(c.holder); pod != pods_.end()) {
    model_.ApplyPod(AugmentLocked(pod->second));  // The bound pod's holding, with or without the claim.
    c.synthetic = false;
    return;
  }
  if (c.allocation) {
    // The pod waits for its bind, which needs its pending entry: ApplyPod of a bound object drops it.
    std::optional<PodRequest> pending = model_.pending().Get(c.holder);
    model_.ApplyPod(ClaimHolding(c));
    if (pending) model_.pending().Put(std::move(*pending));
    c.synthetic = true;
  } else {
    ReleaseClaimLocked(c);
  }
}

void DraCluster::ReleaseClaimLocked(Claim& c) {
  if (c.synthetic) model_.DeletePod(c.holder);
  c.synthetic = false;
}

void DraCluster::ApplyDeviceClass(const k8s::DeviceClassObject& c) {
  std::lock_guard lock(mu_);
  inventory_.ApplyClass(c);
  RefreshAllLocked();
}

void DraCluster::DeleteDeviceClass(std::string_view name) {
  std::lock_guard lock(mu_);
  inventory_.DeleteClass(name);
  RefreshAllLocked();
}

void DraCluster::RefreshPoolClaimsLocked(const std::pair<std::string, std::string>& pool) {
  auto it = claims_by_pool_.find(pool);
  if (it == claims_by_pool_.end()) return;
  for (const std::string& uid : it->second) RefreshClaimLocked(claims_.find(uid)->second);
}

void DraCluster::IndexClaimLocked(const std::string& uid, const k8s::ResourceClaimObject* before,
                                  const k8s::ResourceClaimObject* after) {
  if (before) {
    for (const k8s::DeviceResult& r : before->results) {
      auto it = claims_by_pool_.find({r.driver, r.pool});
      if (it == claims_by_pool_.end()) continue;
      it->second.erase(uid);
      if (it->second.empty()) claims_by_pool_.erase(it);
    }
  }
  if (after)
    for (const k8s::DeviceResult& r : after->results) claims_by_pool_[{r.driver, r.pool}].insert(uid);
}

void DraCluster::ApplyResourceSlice(const k8s::ResourceSliceObject& s) {
  std::lock_guard lock(mu_);
  std::optional<std::pair<std::string, std::string>> old_pool = inventory_.PoolOf(s.meta.name);
  for (const std::string& node : inventory_.ApplySlice(s)) RefreshNodeLocked(node);
  if (old_pool && *old_pool != std::make_pair(s.driver, s.pool)) RefreshPoolClaimsLocked(*old_pool);
  RefreshPoolClaimsLocked({s.driver, s.pool});
}

void DraCluster::DeleteResourceSlice(std::string_view name) {
  std::lock_guard lock(mu_);
  std::optional<std::pair<std::string, std::string>> pool = inventory_.PoolOf(name);
  for (const std::string& node : inventory_.DeleteSlice(name)) RefreshNodeLocked(node);
  if (pool) RefreshPoolClaimsLocked(*pool);
}

std::vector<std::string> DraCluster::ApplyResourceClaim(const k8s::ResourceClaimObject& object) {
  std::lock_guard lock(mu_);
  const std::string& uid = object.meta.uid;
  if (uid.empty()) return {};
  Claim& c = claims_[uid];
  IndexClaimLocked(uid, &c.object, &object);
  if (c.object.meta.uid.empty() || c.object.meta.name != object.meta.name) {
    claim_by_name_.erase({c.object.meta.namespace_, c.object.meta.name});
    claim_by_name_[{object.meta.namespace_, object.meta.name}] = uid;
  }
  c.object = object;
  const bool owned = object.extended_resource && !object.owner_pod.uid.empty();
  std::string holder = owned ? object.owner_pod.uid : kClaimHoldingPrefix + uid;
  if (!c.holder.empty() && c.holder != holder) ReleaseClaimLocked(c);
  c.holder = std::move(holder);
  if (owned) claim_of_pod_.insert_or_assign(object.owner_pod.uid, uid);
  RefreshClaimLocked(c);
  return std::exchange(freed_, {});
}

std::vector<std::string> DraCluster::DeleteResourceClaim(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = claims_.find(uid);
  if (it == claims_.end()) return {};
  Claim& c = it->second;
  c.object.allocated = false;
  RefreshClaimLocked(c);  // The pod's holding loses the claim's GPUs; a claim's own holding goes.
  if (auto p = claim_of_pod_.find(c.holder); p != claim_of_pod_.end() && p->second == uid) claim_of_pod_.erase(p);
  IndexClaimLocked(c.object.meta.uid, &c.object, nullptr);
  if (auto n = claim_by_name_.find({c.object.meta.namespace_, c.object.meta.name});
      n != claim_by_name_.end() && n->second == c.object.meta.uid)
    claim_by_name_.erase(n);
  claims_.erase(it);
  return std::exchange(freed_, {});
}

std::shared_ptr<const DraPodAsk> DraCluster::AskOf(const k8s::PodObject& pod) const {
  if ((pod.resource_claims.empty() && pod.class_resource.empty()) || pod.claims_unread) return nullptr;
  std::lock_guard lock(mu_);
  std::vector<const k8s::ResourceClaimObject*> claims;
  for (const k8s::PodClaimRef& ref : pod.resource_claims) {
    auto uid = claim_by_name_.find({pod.meta.namespace_, ref.claim});
    if (ref.claim.empty() || uid == claim_by_name_.end()) return nullptr;  // Not made yet: not scheduled yet.
    const k8s::ResourceClaimObject& claim = claims_.find(uid->second)->second.object;
    if (claim.allocated) return nullptr;  // Its devices, hence its node, are fixed.
    claims.push_back(&claim);
  }
  k8s::ResourceClaimObject implicit;  // What kube-scheduler's claim for the implicit name will ask.
  if (!pod.class_resource.empty() && pod.class_resource_count > 0) {
    implicit.requests.push_back({"container-0-request-0", pod.class_resource, false, pod.class_resource_count});
    claims.push_back(&implicit);
  }
  auto parsed = inventory_.ParseAsk(claims);
  if (!parsed) return nullptr;
  auto ask = std::make_shared<DraPodAsk>();
  bool gpus = false;
  for (const auto& [name, fingerprint] : applied_) {
    if (fingerprint.empty()) continue;  // No GPUs there.
    auto node = inventory_.NodeAsk(name, *parsed, gpus);
    if (!node) continue;
    int n = 0;
    for (const DraClaimAsk& c : node->claims)
      for (const DraAskRequest& r : c.requests) n += r.count == DraAskRequest::kAll ? int(r.order.size()) : r.count;
    ask->gpus = std::max(ask->gpus, n);
    ask->nodes.emplace(name, std::move(*node));
  }
  if (!gpus || ask->gpus == 0) return nullptr;
  return ask;
}

std::optional<DraAllocation> DraCluster::AllocationOf(std::string_view pod_uid) const {
  std::lock_guard lock(mu_);
  auto c = claim_of_pod_.find(pod_uid);
  if (c == claim_of_pod_.end()) return std::nullopt;
  return claims_.find(c->second)->second.allocation;
}

std::string DraCluster::Warning() const {
  std::lock_guard lock(mu_);
  return inventory_.ClassWarning();
}

}  // namespace topofit::cluster
