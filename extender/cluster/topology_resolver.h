#pragma once
// TopologyResolver: decides which interconnect model a node gets, and says where it came from.
//
// Sources, in order; the first that yields a usable topology wins:
//   1. annotation topofit.io/gpu-topology: a built-in profile name (e.g. "dgx1-v100"), or the raw
//      `nvidia-smi topo -m` text `topofit node` publishes (anything containing a newline or "GPU0" is
//      treated as matrix text).
//   2. the cloud's machine type: label node.kubernetes.io/instance-type (EKS, GKE, AKS) found in
//      topology/machine_types.h. On GKE the label cloud.google.com/gke-accelerator, when present,
//      must name the machine type's GPU; a node whose labels disagree falls through with a warning.
//   3. GPU Feature Discovery labels nvidia.com/gpu.product + nvidia.com/gpu.count, mapped with
//      ProfileForProduct().
//   4. generic-pcie-<allocatable>; on a DRA node (below), the matrix its devices' PCIe roots and NUMA
//      nodes give (dra_topology.h) instead.
// A DRA node (Resolve with DraNodeGpus: the node has no nvidia.com/gpu allocatable and DRA serves
// its GPUs; dra_inventory.h) counts its GPUs from its devices, its GPU model from their productName
// when it has no GFD product label (source 3, spaces as '-'), its UUID map from their identities
// and its PCI bus ids from theirs; `first_fit` keeps the order in which kube-scheduler's allocator
// tries them.
// Shared GPUs (shared_devices.h; device-plugin nodes only): when the GFD labels say the node's GPUs are
// time-sliced, shared by MPS or split by MIG (single strategy), every source above is asked for the
// physical GPUs (the GFD product without its "-SHARED" / "-MIG-<profile>" suffix; the physical count)
// and `physical` is that topology; `topology` is then the devices' (DeviceMatrix), one entry per
// advertised device, and `usable` counts devices. "allocatable" below means physical GPUs for such a
// node. On every other node `physical` is `topology`.
// A source that fails (unknown profile, unparsable text, GPU count that cannot serve the node) adds
// a warning and resolution falls through to the next one: the node still schedules.
//
// Allocatable vs the topology's GPU count:
//   - allocatable == count: every GPU usable.
//   - allocatable <  count: only GPUs 0..allocatable-1 are usable (the device plugin reports some GPUs
//     unhealthy or a MIG/partition setup hides them; we cannot know which, so we assume the first
//     ones and warn).
//   - allocatable >  count: the topology cannot describe the node; this source is skipped with a
//     warning (ultimately generic-pcie-<allocatable>).
//   - allocatable == 0: no topology, no usable GPUs; no warning (most nodes of a cluster have no GPU).
//   - allocatable > 64 (GpuSet::kMaxGpus): capped at 64 with a warning.
//
// GPU identity, from what the node side publishes (extender/node/topology_report.h):
//   - topofit.io/gpu-uuids (and topofit.io/gpu-pci-bus-ids) in index order: the index <-> UUID map
//     that plans and observations are resolved with. Taken only when it lists exactly the
//     topology's GPU count of distinct UUIDs (else a warning, and the node gets index-only plans).
//   - topofit.io/gpu-health ({"v":1,"unhealthy":[UUIDs],...}, needs the UUID map): the node reports
//     health, so the "first allocatable GPUs" guess above is replaced by every GPU of the topology
//     but the unhealthy ones; `observed` is set (the node side also publishes gpu-actual there).
//
// Topologies are interned in the TopologyRegistry, so nodes of one machine type share one Topology
// and its SetSelector cache. Results of parsing each distinct annotation text are memoised, so node
// updates (heartbeats) do not re-parse. Thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "extender/cluster/dra_gpus.h"
#include "extender/cluster/shared_devices.h"
#include "extender/k8s/objects.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::cluster {

enum class TopologySource : uint8_t {
  kNone,                  // allocatable 0: no GPUs.
  kAnnotationProfile,     // topofit.io/gpu-topology named a built-in profile.
  kAnnotationMatrix,      // topofit.io/gpu-topology held `nvidia-smi topo -m` text.
  kCloudInstanceType,     // node.kubernetes.io/instance-type (+ cloud.google.com/gke-accelerator).
  kGfdLabels,             // nvidia.com/gpu.product + nvidia.com/gpu.count.
  kGenericFallback,       // generic-pcie-<allocatable>.
  kDraAttributes,         // A DRA node's devices: PCIe root and NUMA (dra_topology.h).
};

// "none", "annotation-profile", "annotation-matrix", "cloud-instance-type", "gfd-labels",
// "generic-fallback", "dra-attributes".
std::string_view ToString(TopologySource source);

struct ResolvedTopology {
  std::shared_ptr<const Topology> topology;  // null only for kNone. Of the devices on a shared node.
  std::shared_ptr<const Topology> physical;  // The physical GPUs' on a shared node; else == topology.
  SharedDevices shared;                      // What each device is; mode kNone when not shared.
  TopologySource source = TopologySource::kNone;
  std::string profile;             // Profile name for profile-based sources; "" for matrix text.
  int allocatable = 0;             // As the node reports it (capped at 64).
  GpuSet usable;                   // GPUs that may be granted: FirstN(min(allocatable, gpu_count)).
  std::vector<std::string> warnings;
  std::vector<std::string> uuids;        // Physical index -> UUID; empty when the node published no usable map.
  std::vector<std::string> pci_bus_ids;  // Index -> PCI bus id; empty when not published.
  // MIG nodes: device index -> the MIG device's UUID (topofit.io/gpu-mig-uuids); empty when not published
  // or when it disagrees with the labels (every GPU split into `shared.per_gpu` devices).
  std::vector<std::string> mig_ids;
  bool observed = false;                 // The node reports health (and gpu-actual).
  GpuSet unhealthy;                      // As the node reports it; empty when it does not.
  // DRA nodes only: the GPU indices in the order kube-scheduler's allocator tries them; empty on
  // nodes whose GPUs the device plugin serves.
  std::vector<int> first_fit;
  uint64_t first_fit_hash = 0;           // A hash of first_fit, never 0 on a DRA node; 0 elsewhere.
  std::string dra_class;                 // The DeviceClass; "" unless DRA serves the node's GPUs.
  bool dra() const { return !dra_class.empty(); }

  // The index of `uuid` in `uuids`, or -1.
  int IndexOf(std::string_view uuid) const;
  // The device index of an id kubelet knows a device by (DeviceIds' inverse): the UUID on a node that
  // does not share GPUs; "<uuid>::<replica>" under time-slicing and MPS (replica below devices per
  // GPU); a MIG device's UUID of `mig_ids` on MIG. -1 otherwise: an unknown or malformed id, a bare
  // GPU UUID on a shared node.
  int DeviceIndexOf(std::string_view id) const;
  // The physical GPU an id names: a GPU UUID with its "::<replica>" suffix (if any) dropped, or the
  // GPU of a MIG device of `mig_ids`; -1 when none. Health is a physical GPU's: the device plugin
  // reports a GPU's replicas with the GPU's health.
  int PhysicalIndexOf(std::string_view id) const;
  // Device index -> the id kubelet knows it by: `uuids` on a node that does not share GPUs, the device
  // plugin's replica ids "<uuid>::<replica>" under time-slicing and MPS, `mig_ids` on MIG; empty when
  // not known (no UUIDs or no MIG map published).
  std::vector<std::string> DeviceIds() const;
};

class TopologyResolver {
 public:
  // `registry` must outlive the resolver.
  explicit TopologyResolver(TopologyRegistry* registry);

  // dra: the node's DRA GPUs, or nullptr where the device plugin serves them.
  ResolvedTopology Resolve(const k8s::NodeObject& node, const DraNodeGpus* dra = nullptr);

 private:
  // The topology of the first source that yields one (the header's order), with the warnings of
  // those that failed; allocatable and usable GPUs set.
  ResolvedTopology ResolveSource(const k8s::NodeObject& node, const std::optional<std::string>& topology_annotation,
                                 const DraNodeGpus* dra);
  // Each source: true when it gave `r` its topology (AcceptTopology); false, with a warning when it
  // was present but failed, to fall through to the next.
  bool FromAnnotation(const std::optional<std::string>& annotation, ResolvedTopology& r);
  bool FromInstanceType(const k8s::NodeObject& node, ResolvedTopology& r);
  bool FromGfdLabels(const k8s::NodeObject& node, const DraNodeGpus* dra, ResolvedTopology& r);
  bool FromDraAttributes(const DraNodeGpus& dra, ResolvedTopology& r);
  // The identity, PCI bus ids and allocator order of a DRA node's GPUs into r.
  static void TakeDraIdentity(const DraNodeGpus& dra, ResolvedTopology& r);
  // A MIG node's topofit.io/gpu-mig-uuids into r.mig_ids when it lists `shared.per_gpu` distinct MIG
  // devices for each of the `shared.gpus` GPUs; else a warning and no map.
  static void TakeMigIds(std::string_view text, ResolvedTopology& r);
  bool FromGenericProfile(ResolvedTopology& r);
  // On a node that shares its GPUs: r's physical topology becomes `physical`, the devices' its topology.
  void ExpandShared(ResolvedTopology& r, int allocatable_devices);
  Result<std::shared_ptr<const Topology>> FromProfile(const std::string& name);
  Result<std::shared_ptr<const Topology>> FromText(const std::string& text);
  // Memoises load() -> Intern() under `key`, errors included, so a bad annotation is parsed once.
  Result<std::shared_ptr<const Topology>> Memoized(std::string key,
                                                   const std::function<Result<TopoMatrix>()>& load);

  TopologyRegistry* registry_;
  std::mutex mu_;
  // Memo of annotation text / profile name -> interned topology or error. Bounded: cleared when it
  // grows past kMemoLimit (distinct texts are few; a flood of distinct garbage must not grow memory).
  static constexpr size_t kMemoLimit = 4096;
  std::unordered_map<std::string, Result<std::shared_ptr<const Topology>>> memo_;
};

}  // namespace topofit::cluster
