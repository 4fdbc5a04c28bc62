#include "extender/cluster/topology_resolver.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>

#include "extender/k8s/gpu_plan.h"
#include "extender/k8s/topofit_annotations.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "extender/cluster/dra_topology.h"
#include "topology/machine_types.h"
#include "topology/profiles.h"
#include "topology/topo_parser.h"

namespace topofit::cluster {

namespace {

// Errors can be multi-line (parser context); a warning is one line.
std::string FirstLine(std::string_view s) {
  auto nl = s.find('\n');
  return std::string(nl == std::string_view::npos ? s : s.substr(0, nl));
}

bool LooksLikeMatrix(std::string_view s) {
  return s.find('\n') != std::string_view::npos || s.find("GPU0") != std::string_view::npos;
}

std::string Range(int n) { return n == 1 ? "GPU 0" : fmt::format("GPUs 0-{}", n - 1); }

}  // namespace

std::string_view ToString(TopologySource source) {
  switch (source) {
    case TopologySource::kNone: return "none";
    case TopologySource::kAnnotationProfile: return "annotation-profile";
    case TopologySource::kAnnotationMatrix: return "annotation-matrix";
    case TopologySource::kCloudInstanceType: return "cloud-instance-type";
    case TopologySource::kGfdLabels: return "gfd-labels";
    case TopologySource::kGenericFallback: return "generic-fallback";
    case TopologySource::kDraAttributes: return "dra-attributes";
  }
  return "?";
}

TopologyResolver::TopologyResolver(TopologyRegistry* registry) : registry_(registry) {}

Result<std::shared_ptr<const Topology>> TopologyResolver::Memoized(
    std::string key, const std::function<Result<TopoMatrix>()>& load) {
  {
    std::lock_guard lock(mu_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  }
  Result<std::shared_ptr<const Topology>> out = Error{""};
  auto matrix = load();
  if (!matrix.ok()) {
    out = Error{matrix.error()};
  } else {
    out = registry_->Intern(std::move(matrix).value());
  }
  std::lock_guard lock(mu_);
  if (memo_.size() >= kMemoLimit) memo_.clear();
  memo_.insert_or_assign(std::move(key), out);
  return out;
}

Result<std::shared_ptr<const Topology>> TopologyResolver::FromProfile(const std::string& name) {
  return Memoized("profile:" + name, [&] { return ProfileMatrix(name); });
}

Result<std::shared_ptr<const Topology>> TopologyResolver::FromText(const std::string& text) {
  return Memoized("text:" + text, [&] { return ParseTopoMatrix(text); });
}

std::vector<std::string> ResolvedTopology::DeviceIds() const {
  if (!shared.shared()) return uuids;
  if (shared.mig()) return mig_ids;
  std::vector<std::string> ids;
  if (uuids.empty()) return ids;
  for (int d = 0; d < shared.devices(); ++d) {
    const int g = shared.GpuOf(d);
    if (g >= static_cast<int>(uuids.size())) return {};
    ids.push_back(fmt::format("{}::{}", uuids[g], shared.SlotOf(d)));
  }
  return ids;
}

int ResolvedTopology::IndexOf(std::string_view uuid) const {
  for (size_t i = 0; i < uuids.size(); ++i)
    if (uuids[i] == uuid) return static_cast<int>(i);
  return -1;
}

namespace {
// "<uuid>::<replica>" as the device plugin's AnnotatedID.Split reads it; replica -1 when `id` has no
// "::" or its replica is not a plain non-negative number.
std::pair<std::string_view, int> SplitReplicaId(std::string_view id) {
  const size_t at = id.find("::");
  if (at == std::string_view::npos) return {id, -1};
  const std::string_view digits = id.substr(at + 2);
  int replica = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), replica);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || replica < 0) replica = -1;
  return {id.substr(0, at), replica};
}

int PositionOf(const std::vector<std::string>& ids, std::string_view id) {
  auto it = std::find(ids.begin(), ids.end(), id);
  return it == ids.end() ? -1 : static_cast<int>(it - ids.begin());
}
}  // namespace

int ResolvedTopology::DeviceIndexOf(std::string_view id) const {
  if (!shared.shared()) return IndexOf(id);
  if (shared.mig()) return PositionOf(mig_ids, id);
  auto [uuid, replica] = SplitReplicaId(id);
  const int gpu = IndexOf(uuid);
  if (gpu < 0 || gpu >= shared.gpus || replica < 0 || replica >= shared.per_gpu) return -1;
  return gpu * shared.per_gpu + replica;
}

int ResolvedTopology::PhysicalIndexOf(std::string_view id) const {
  if (shared.mig()) {
    if (int d = PositionOf(mig_ids, id); d >= 0) return shared.GpuOf(d);
  }
  return IndexOf(SplitReplicaId(id).first);
}

void TopologyResolver::TakeMigIds(std::string_view text, ResolvedTopology& r) {
  if (Trim(text).empty()) return;
  std::vector<std::string_view> gpus = Split(text, ';');
  std::vector<std::string> ids;
  bool uniform = static_cast<int>(gpus.size()) == r.shared.gpus;
  for (std::string_view g : gpus) {
    std::vector<std::string_view> devices = Split(g, ',');
    uniform &= static_cast<int>(devices.size()) == r.shared.per_gpu;
    for (std::string_view d : devices) ids.emplace_back(Trim(d));
  }
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  const bool bad = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
                   std::any_of(ids.begin(), ids.end(), [](const std::string& s) { return s.empty(); });
  if (!uniform || bad) {
    r.warnings.push_back(fmt::format("{} lists {} MIG devices on {} GPUs{} but the labels say {} GPUs of {} {}; "
                                     "MIG devices are not named in plans",
                                     k8s::kGpuMigUuidsAnnotation, ids.size(), gpus.size(),
                                     bad ? " (empty or repeated)" : "", r.shared.gpus, r.shared.per_gpu,
                                     r.shared.mig_profile));
    return;
  }
  r.mig_ids = std::move(ids);
}

namespace {

// The decoded list of `key`; nullopt (with a warning) unless it names `count` distinct non-empty items.
std::optional<std::vector<std::string>> IndexList(const std::optional<std::vector<std::string>>& list,
                                                  const char* key, int count, std::vector<std::string>& warnings) {
  if (!list) return std::nullopt;
  const std::vector<std::string>& out = *list;
  std::vector<std::string> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  bool bad = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
             std::any_of(out.begin(), out.end(), [](const std::string& s) { return s.empty(); });
  if (static_cast<int>(out.size()) != count || bad) {
    warnings.push_back(fmt::format("{} lists {} entries{} but the topology has {} GPUs; ignored", key, out.size(),
                                   bad ? " (empty or repeated)" : "", count));
    return std::nullopt;
  }
  return out;
}

}  // namespace

void TopologyResolver::TakeDraIdentity(const DraNodeGpus& dra, ResolvedTopology& r) {
  r.dra_class = dra.device_class;
  if (r.topology->gpu_count() != static_cast<int>(dra.gpus.size())) {
    r.warnings.push_back(fmt::format("the topology has {} GPUs but DRA serves {}; GPU identities not mapped",
                                     r.topology->gpu_count(), dra.gpus.size()));
    for (int i = 0; i < r.topology->gpu_count(); ++i) r.first_fit.push_back(i);
    return;
  }
  r.first_fit = dra.first_fit;
  bool all_pci = true;
  for (const DraGpu& g : dra.gpus) {
    r.uuids.push_back(g.identity);
    r.pci_bus_ids.push_back(g.pci_bus_id);
    all_pci &= !g.pci_bus_id.empty();
  }
  if (!all_pci) r.pci_bus_ids.clear();
}

namespace {
uint64_t OrderHash(const std::vector<int>& order) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (int i : order) h = (h ^ static_cast<uint64_t>(i + 1)) * 0x100000001B3ull;
  return h | 1;  // Never 0: 0 means "not a DRA node".
}
}  // namespace

ResolvedTopology TopologyResolver::Resolve(const k8s::NodeObject& node, const DraNodeGpus* dra) {
  const k8s::NodeGpuAnnotations a = k8s::DecodeNodeGpuAnnotations(node);
  ResolvedTopology r = ResolveSource(node, a.topology, dra);
  if (!r.topology) return r;
  if (dra) {
    TakeDraIdentity(*dra, r);
    r.first_fit_hash = OrderHash(r.first_fit);
    return r;  // The node side's annotations describe device-plugin GPUs; DRA's devices say who they are.
  }
  const int count = r.physical->gpu_count();
  if (auto uuids = IndexList(a.uuids, k8s::kGpuUuidsAnnotation, count, r.warnings)) r.uuids = std::move(*uuids);
  if (auto pci = IndexList(a.pci_bus_ids, k8s::kGpuPciAnnotation, count, r.warnings)) r.pci_bus_ids = std::move(*pci);
  if (r.shared.mig() && a.mig_uuids) TakeMigIds(*a.mig_uuids, r);
  if (!a.health.value && a.health.error.empty()) return r;
  if (r.uuids.empty()) {
    r.warnings.push_back(fmt::format("{} needs {}; ignored", k8s::kGpuHealthAnnotation, k8s::kGpuUuidsAnnotation));
    return r;
  }
  if (!a.health.value) {
    r.warnings.push_back(fmt::format("{}: {}; ignored", k8s::kGpuHealthAnnotation, a.health.error));
    return r;
  }
  const k8s::GpuHealthReport* report = &*a.health.value;
  for (const std::string& uuid : report->unhealthy) {
    int i = r.PhysicalIndexOf(uuid);
    if (i < 0) {
      r.warnings.push_back(fmt::format("{} names {}, which is not one of the node's GPUs", k8s::kGpuHealthAnnotation, uuid));
    } else {
      r.unhealthy.Add(i);
    }
  }
  r.observed = true;
  r.usable = GpuSet::FirstN(count) - r.unhealthy;
  if (r.shared.shared()) r.usable = r.shared.DevicesOfGpus(r.usable & GpuSet::FirstN(r.shared.gpus));
  if (r.usable.size() != r.allocatable) {
    r.warnings.push_back(fmt::format("{} healthy GPUs reported but the node has {} allocatable", r.usable.size(),
                                     r.allocatable));
  }
  return r;
}

namespace {

// Accepts `t` from `source` as r's topology if it can describe the node's r.allocatable GPUs;
// otherwise adds a warning naming `what` and says no.
bool AcceptTopology(ResolvedTopology& r, Result<std::shared_ptr<const Topology>> t, TopologySource source,
                    std::string profile, std::string_view what) {
  if (!t.ok()) {
    r.warnings.push_back(fmt::format("{}: {}; falling back", what, FirstLine(t.error())));
    return false;
  }
  const int count = (*t)->gpu_count();
  if (count < r.allocatable) {
    r.warnings.push_back(fmt::format("{} describes {} GPUs but the node has {} allocatable; falling back", what,
                                     count, r.allocatable));
    return false;
  }
  if (count > r.allocatable) {
    r.warnings.push_back(fmt::format("{} describes {} GPUs but the node has {} allocatable; using {}", what, count,
                                     r.allocatable, Range(r.allocatable)));
  }
  // What the model took as given (a matrix that is not one PCIe tree, modelled pair by pair): the
  // node schedules on it, and its warnings say so where people look (/api/v1/nodes, explain, the log).
  for (const std::string& w : (*t)->warnings()) r.warnings.push_back(fmt::format("{}: {}", what, w));
  r.topology = *t;
  r.source = source;
  r.profile = std::move(profile);
  r.usable = GpuSet::FirstN(r.allocatable);
  return true;
}

// The GPU count of the GFD labels: nvidia.com/gpu.count when it is a positive integer, else the
// node's allocatable (with a warning when the label is there but no count).
int GfdCount(const std::map<std::string, std::string>& labels, ResolvedTopology& r) {
  auto c = labels.find(k8s::kGfdCountLabel);
  if (c == labels.end()) return r.allocatable;
  std::string_view v = Trim(c->second);
  int parsed = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
  if (ec == std::errc() && end == v.data() + v.size() && parsed > 0) return parsed;
  r.warnings.push_back(fmt::format("label {} '{}' is not a GPU count; using allocatable {}", k8s::kGfdCountLabel,
                                   c->second, r.allocatable));
  return r.allocatable;
}

}  // namespace

ResolvedTopology TopologyResolver::ResolveSource(const k8s::NodeObject& node,
                                                 const std::optional<std::string>& topology_annotation,
                                                 const DraNodeGpus* dra) {
  ResolvedTopology r;
  int64_t alloc = dra ? static_cast<int64_t>(dra->gpus.size()) : std::max<int64_t>(node.allocatable_gpus, 0);
  if (alloc > GpuSet::kMaxGpus) {
    r.warnings.push_back(fmt::format("{} allocatable GPUs; topofit models at most {}", alloc, GpuSet::kMaxGpus));
    alloc = GpuSet::kMaxGpus;
  }
  r.allocatable = static_cast<int>(alloc);
  if (alloc == 0) return r;
  const int devices = r.allocatable;
  if (!dra) {
    if (auto shared = ReadSharing(node.meta.labels, devices, r.warnings)) {
      r.shared = *shared;
      r.allocatable = shared->gpus;  // The sources below describe physical GPUs.
    }
  }
  if (!FromAnnotation(topology_annotation, r) && !FromInstanceType(node, r) && !FromGfdLabels(node, dra, r)) {
    if (dra) {
      FromDraAttributes(*dra, r);
    } else {
      FromGenericProfile(r);  // Without a topology the node has no usable GPUs (the warning says why).
    }
  }
  r.physical = r.topology;
  if (r.shared.shared() && r.topology) ExpandShared(r, devices);
  return r;
}

void TopologyResolver::ExpandShared(ResolvedTopology& r, int devices) {
  SharedDevices& s = r.shared;
  auto t = Memoized(fmt::format("shared:{}:{}:{}:{}", ToString(s.mode), s.per_gpu, s.gpus, r.physical->fingerprint()),
                    [&] { return DeviceMatrix(r.physical->matrix(), s); });
  if (!t.ok()) {
    r.warnings.push_back(fmt::format("{} devices: {}; no GPU of the node is usable", ToString(s.mode), FirstLine(t.error())));
    r.topology = nullptr;
    r.physical = nullptr;
    r.usable = GpuSet();
    return;
  }
  r.topology = *t;
  r.allocatable = devices;
  r.usable = s.DevicesOfGpus(r.usable) & GpuSet::FirstN(std::min(devices, s.devices()));
}

bool TopologyResolver::FromAnnotation(const std::optional<std::string>& annotation, ResolvedTopology& r) {
  if (!annotation || Trim(*annotation).empty()) return false;
  std::string_view value = Trim(*annotation);
  if (LooksLikeMatrix(value)) {
    return AcceptTopology(r, FromText(*annotation), TopologySource::kAnnotationMatrix, "",
                          fmt::format("{} (topo matrix)", k8s::kTopologyAnnotation));
  }
  std::string name = AsciiLower(value);
  return AcceptTopology(r, FromProfile(name), TopologySource::kAnnotationProfile, name,
                        fmt::format("{} '{}'", k8s::kTopologyAnnotation, value));
}

bool TopologyResolver::FromInstanceType(const k8s::NodeObject& node, ResolvedTopology& r) {
  const auto& labels = node.meta.labels;
  auto it = labels.find(k8s::kInstanceTypeLabel);
  if (it == labels.end() || Trim(it->second).empty()) return false;
  std::string_view type = Trim(it->second);
  const MachineType* m = FindMachineType(type);
  if (!m) return false;
  std::string what = fmt::format("instance type {} ({} x{} -> {})", type, m->gpu, m->gpu_count, m->profile);
  auto acc = labels.find(k8s::kGkeAcceleratorLabel);
  if (!m->gke_accelerator.empty() && acc != labels.end() && Trim(acc->second) != m->gke_accelerator) {
    r.warnings.push_back(fmt::format("{}: label {} is '{}', not '{}'; falling back", what, k8s::kGkeAcceleratorLabel,
                                     Trim(acc->second), m->gke_accelerator));
    return false;
  }
  return AcceptTopology(r, FromProfile(std::string(m->profile)), TopologySource::kCloudInstanceType,
                        std::string(m->profile), what);
}

bool TopologyResolver::FromGfdLabels(const k8s::NodeObject& node, const DraNodeGpus* dra, ResolvedTopology& r) {
  const auto& labels = node.meta.labels;
  auto it = labels.find(k8s::kGfdProductLabel);
  std::string product = it == labels.end() ? std::string() : std::string(Trim(it->second));
  int count = 0;
  if (!product.empty() && r.shared.shared()) {
    // A shared node's labels: the physical product, and its GPUs as ReadSharing counted them.
    product = std::string(StripSharingSuffix(product));
    count = r.shared.gpus;
  } else if (!product.empty()) {
    count = dra ? r.allocatable : GfdCount(labels, r);
  } else if (dra && !dra->gpus.empty() && !dra->gpus[0].product.empty()) {
    product = dra->gpus[0].product;  // GFD writes NVML's name with '-' for ' '.
    std::replace(product.begin(), product.end(), ' ', '-');
    count = r.allocatable;
  }
  if (product.empty()) return false;
  std::string name = ProfileForProduct(product, count);
  if (dra && name.rfind("generic-pcie-", 0) == 0) return false;  // The devices tell more than that.
  return AcceptTopology(r, FromProfile(name), TopologySource::kGfdLabels, name,
                        fmt::format("GFD labels ({} x{} -> {})", product, count, name));
}

bool TopologyResolver::FromDraAttributes(const DraNodeGpus& dra, ResolvedTopology& r) {
  std::string key = "dra:";  // What the matrix depends on: nodes alike share one parse and one Topology.
  for (const DraGpu& g : dra.gpus) key += fmt::format("{}\x1f{}\x1e", g.pcie_root, g.numa);
  return AcceptTopology(r, Memoized(std::move(key), [&]() -> Result<TopoMatrix> { return DraMatrix(dra); }),
                        TopologySource::kDraAttributes, "", fmt::format("DRA devices of class {}", dra.device_class));
}

bool TopologyResolver::FromGenericProfile(ResolvedTopology& r) {
  std::string generic = fmt::format("generic-pcie-{}", r.allocatable);
  return AcceptTopology(r, FromProfile(generic), TopologySource::kGenericFallback, generic, generic);
}

}  // namespace topofit::cluster
