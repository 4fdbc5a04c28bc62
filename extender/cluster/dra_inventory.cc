#include "extender/cluster/dra_inventory.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "extender/cluster/device_selector.h"

namespace topofit::cluster {
namespace {

std::string Attribute(const k8s::DraDevice& d, const std::string& driver, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    std::string key = std::string_view(n).find('/') == std::string_view::npos ? driver + "/" + n : std::string(n);
    if (auto it = d.attributes.find(key); it != d.attributes.end()) return it->second;
  }
  return {};
}

DraGpu GpuOf(const k8s::ResourceSliceObject& s, const k8s::DraDevice& d) {
  DraGpu g;
  g.driver = s.driver;
  g.pool = s.pool;
  g.device = d.name;
  g.identity = Attribute(d, s.driver, {"uuid"});
  if (g.identity.empty()) g.identity = fmt::format("{}/{}/{}", s.driver, s.pool, d.name);
  g.pci_bus_id = Attribute(d, s.driver, {"pcieBusID", "resource.kubernetes.io/pciBusID"});
  g.pcie_root = Attribute(d, s.driver, {"resource.kubernetes.io/pcieRoot"});
  g.product = Attribute(d, s.driver, {"productName"});
  std::string numa = Attribute(d, s.driver, {"numa", "numaNode"});
  if (!numa.empty() && numa.size() < 4 && std::all_of(numa.begin(), numa.end(), ::isdigit)) g.numa = std::stoi(numa);
  return g;
}

struct Pool {
  std::string driver, name;
  int64_t generation = 0, slice_count = 0;
  bool binding_conditions = false;
  std::vector<const k8s::ResourceSliceObject*> slices;  // Of the newest generation.
};

// The node's pools in the allocator's order, each with its newest generation's slices by name.
std::vector<Pool> PoolsInOrder(const std::vector<const k8s::ResourceSliceObject*>& slices) {
  std::map<std::pair<std::string, std::string>, Pool> pools;
  for (const auto* s : slices) {
    Pool& p = pools[{s->driver, s->pool}];
    if (p.slices.empty() || s->generation > p.generation) {
      p = Pool{s->driver, s->pool, s->generation, s->slice_count, false, {}};
    } else if (s->generation < p.generation) {
      continue;
    }
    p.slices.push_back(s);
    p.binding_conditions |= s->binding_conditions;
  }
  std::vector<Pool> out;
  for (auto& [key, p] : pools) {
    if (static_cast<int64_t>(p.slices.size()) != p.slice_count) continue;  // Incomplete: never allocated from.
    std::sort(p.slices.begin(), p.slices.end(), [](auto* a, auto* b) { return a->meta.name < b->meta.name; });
    out.push_back(std::move(p));
  }
  std::stable_partition(out.begin(), out.end(), [](const Pool& p) { return !p.binding_conditions; });
  return out;
}

// Index order: by PCI bus id when every GPU has a distinct one, else first-fit order.
void NumberGpus(std::vector<DraGpu> in_order, DraNodeGpus& out) {
  std::vector<int> by_index(in_order.size());
  for (size_t i = 0; i < by_index.size(); ++i) by_index[i] = static_cast<int>(i);
  std::set<std::string> ids;
  for (const DraGpu& g : in_order) ids.insert(g.pci_bus_id);
  if (!ids.count("") && ids.size() == in_order.size()) {
    std::sort(by_index.begin(), by_index.end(),
              [&](int a, int b) { return in_order[a].pci_bus_id < in_order[b].pci_bus_id; });
  }
  out.first_fit.assign(in_order.size(), 0);
  for (size_t index = 0; index < by_index.size(); ++index) {
    out.first_fit[by_index[index]] = static_cast<int>(index);
    out.gpus.push_back(in_order[by_index[index]]);
  }
}

}  // namespace

std::string DraNodeGpus::Fingerprint() const {
  std::string out = device_class;
  for (const DraGpu& g : gpus)
    out += fmt::format("\x1e{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", g.driver, g.pool, g.device, g.identity,
                       g.pci_bus_id, g.pcie_root, g.numa, g.product);
  for (int i : first_fit) out += fmt::format("\x1d{}", i);
  return out;
}

void DraInventory::ApplyClass(k8s::DeviceClassObject c) {
  std::string name = c.meta.name;
  classes_.insert_or_assign(std::move(name), std::move(c));
  RefreshClassLocked();
}

void DraInventory::DeleteClass(std::string_view name) {
  if (auto it = classes_.find(name); it != classes_.end()) classes_.erase(it);
  RefreshClassLocked();
}

void DraInventory::RefreshClassLocked() {
  gpu_class_ = nullptr;
  for (const auto& [name, c] : classes_) {  // By name: on equal times the lowest name stays.
    if (c.extended_resource_name != k8s::kGpuResource) continue;
    if (!gpu_class_ || c.creation_timestamp > gpu_class_->creation_timestamp) gpu_class_ = &c;
  }
  selector_.reset();
  if (gpu_class_) selector_ = DeviceSelector::Parse(gpu_class_->cel_selectors);
}

std::vector<std::string> DraInventory::ApplySlice(k8s::ResourceSliceObject s) {
  std::vector<std::string> touched = DeleteSlice(s.meta.name);
  if (!s.node_name.empty()) {
    slices_by_node_[s.node_name].insert(s.meta.name);
    slices_by_pool_[{s.driver, s.pool}].insert(s.meta.name);
    touched.push_back(s.node_name);
  }
  std::string name = s.meta.name;
  slices_.insert_or_assign(std::move(name), std::move(s));
  return touched;
}

std::vector<std::string> DraInventory::DeleteSlice(std::string_view name) {
  auto it = slices_.find(name);
  if (it == slices_.end()) return {};
  std::vector<std::string> touched;
  const std::string node = it->second.node_name;
  if (auto p = slices_by_pool_.find({it->second.driver, it->second.pool}); p != slices_by_pool_.end()) {
    p->second.erase(std::string(name));
    if (p->second.empty()) slices_by_pool_.erase(p);
  }
  if (auto n = slices_by_node_.find(node); n != slices_by_node_.end()) {
    n->second.erase(std::string(name));
    if (n->second.empty()) slices_by_node_.erase(n);
    touched.push_back(node);
  }
  slices_.erase(it);
  return touched;
}

const k8s::DeviceClassObject* DraInventory::GpuClass() const { return gpu_class_; }

std::string DraInventory::ClassWarning() const {
  if (!gpu_class_ || !selector_ || selector_->ok()) return {};
  return fmt::format("DeviceClass {}: {}", gpu_class_->meta.name, selector_->error());
}

std::optional<std::pair<std::string, std::string>> DraInventory::PoolOf(std::string_view slice) const {
  auto it = slices_.find(slice);
  if (it == slices_.end()) return std::nullopt;
  return std::make_pair(it->second.driver, it->second.pool);
}

std::set<std::string> DraInventory::NodesOfPool(const std::string& driver, const std::string& pool) const {
  std::set<std::string> out;
  auto it = slices_by_pool_.find({driver, pool});
  if (it == slices_by_pool_.end()) return out;
  for (const std::string& name : it->second) out.insert(slices_.find(name)->second.node_name);
  return out;
}

std::vector<std::pair<const k8s::ResourceSliceObject*, const k8s::DraDevice*>> DraInventory::DevicesInOrder(
    std::string_view node) const {
  std::vector<std::pair<const k8s::ResourceSliceObject*, const k8s::DraDevice*>> out;
  auto names = slices_by_node_.find(node);
  if (names == slices_by_node_.end()) return out;
  std::vector<const k8s::ResourceSliceObject*> slices;
  for (const std::string& n : names->second) slices.push_back(&slices_.find(n)->second);
  for (const Pool& pool : PoolsInOrder(slices))
    for (const auto* s : pool.slices)
      for (const k8s::DraDevice& d : s->devices)
        if (!d.tainted) out.emplace_back(s, &d);
  return out;
}

std::optional<DraNodeGpus> DraInventory::NodeGpus(std::string_view node) const {
  const k8s::DeviceClassObject* c = gpu_class_;
  if (!c || !selector_ || !selector_->ok()) return std::nullopt;
  const DeviceSelector* selector = &**selector_;
  std::vector<DraGpu> in_order;
  for (const auto& [s, d] : DevicesInOrder(node))
    if (selector->Matches(s->driver, d->attributes)) in_order.push_back(GpuOf(*s, *d));
  if (in_order.empty()) return std::nullopt;
  DraNodeGpus out;
  out.device_class = c->meta.name;
  NumberGpus(std::move(in_order), out);
  return out;
}

std::optional<std::vector<DraInventory::AskClaim>> DraInventory::ParseAsk(
    const std::vector<const k8s::ResourceClaimObject*>& claims) const {
  std::vector<AskClaim> out;
  for (const k8s::ResourceClaimObject* claim : claims) {
    AskClaim c;
    for (const k8s::DeviceConstraint& con : claim->constraints) {
      bool all = con.requests.empty() || con.requests.size() >= claim->requests.size();
      if (con.other || con.match_attribute.empty() || !c.match_attribute.empty() || !all) return std::nullopt;
      c.match_attribute = con.match_attribute;
    }
    for (const k8s::DeviceRequest& r : claim->requests) {
      auto cls = classes_.find(r.device_class);
      if (r.first_available || r.tolerates || cls == classes_.end()) return std::nullopt;
      std::vector<std::string> cel = cls->second.cel_selectors;
      cel.insert(cel.end(), r.cel_selectors.begin(), r.cel_selectors.end());
      auto selector = DeviceSelector::Parse(cel);
      if (!selector.ok()) return std::nullopt;
      c.requests.push_back({std::move(*selector), r.all ? DraAskRequest::kAll : static_cast<int>(r.count)});
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<DraNodeAsk> DraInventory::NodeAsk(std::string_view node, const std::vector<AskClaim>& claims,
                                                bool& gpus) const {
  std::optional<DraNodeGpus> node_gpus = NodeGpus(node);
  if (!node_gpus) return std::nullopt;
  std::map<std::tuple<std::string, std::string, std::string>, int> index;  // (driver, pool, device) -> GPU.
  for (size_t i = 0; i < node_gpus->gpus.size(); ++i) {
    const DraGpu& g = node_gpus->gpus[i];
    index[{g.driver, g.pool, g.device}] = static_cast<int>(i);
  }
  auto devices = DevicesInOrder(node);
  auto gpu_of = [&](const k8s::ResourceSliceObject* s, const k8s::DraDevice* d) {
    auto it = index.find({s->driver, s->pool, d->name});
    return it == index.end() ? -1 : it->second;
  };
  DraNodeAsk ask;
  for (const AskClaim& claim : claims) {
    DraClaimAsk c;
    for (const AskRequest& r : claim.requests) {
      DraAskRequest out{{}, r.count};
      bool other = false;
      for (const auto& [s, d] : devices) {
        if (!r.selector.Matches(s->driver, d->attributes)) continue;
        int i = gpu_of(s, d);
        if (i < 0) other = true;
        else out.order.push_back(i);
      }
      if (other && !out.order.empty()) return std::nullopt;  // GPUs and other devices: not predicted.
      if (out.order.empty()) continue;  // Other devices (or none): not the GPUs' business.
      gpus = true;
      c.requests.push_back(std::move(out));
    }
    if (!claim.match_attribute.empty()) {
      c.values.assign(node_gpus->gpus.size(), std::string());
      for (const auto& [s, d] : devices) {
        auto v = d->attributes.find(claim.match_attribute);
        if (int i = gpu_of(s, d); i >= 0 && v != d->attributes.end()) c.values[i] = v->second;
      }
    }
    ask.claims.push_back(std::move(c));
  }
  ask.Seal();
  return ask;
}

std::optional<DraAllocation> DraInventory::Allocation(const k8s::ResourceClaimObject& claim) const {
  if (!claim.allocated) return std::nullopt;
  DraAllocation out;
  std::map<std::string, std::optional<DraNodeGpus>, std::less<>> nodes;  // Memo per node.
  for (const k8s::DeviceResult& r : claim.results) {
    for (const std::string& node : NodesOfPool(r.driver, r.pool)) {
      auto memo = nodes.find(node);
      if (memo == nodes.end()) memo = nodes.emplace(node, NodeGpus(node)).first;
      if (!memo->second) continue;
      const auto& gpus = memo->second->gpus;
      auto g = std::find_if(gpus.begin(), gpus.end(), [&](const DraGpu& x) {
        return x.driver == r.driver && x.pool == r.pool && x.device == r.device;
      });
      if (g == gpus.end()) continue;
      if (!out.node.empty() && out.node != node) continue;  // Node-local GPUs: one node per claim.
      out.node = node;
      auto req = std::find_if(out.requests.begin(), out.requests.end(), [&](auto& p) { return p.first == r.request; });
      if (req == out.requests.end()) req = out.requests.insert(out.requests.end(), {r.request, {}});
      req->second.push_back(g->identity);
      ++out.count;
      break;
    }
  }
  if (out.count == 0) return std::nullopt;
  return out;
}

}  // namespace topofit::cluster
