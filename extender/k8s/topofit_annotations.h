#pragma once
// The annotations topofit and its node side write on pods and nodes, decoded beside the objects that
// carry them (the keys are in objects.h and gpu_plan.h), so that the cluster model reads values, not
// text.
//
// Each value is absent (no annotation: `value` empty, `error` empty), decoded, or unusable: `error`
// says why without the key (e.g. "'0,x' is not a GPU list like 0,1,2,3"), and the reader names the key
// in what it shows. What a value means for a node (does a UUID list match its GPU count, does the
// health report name its GPUs) is the model's business, not the decoder's.
//
//   pod   topofit.io/gpu-ids     "0,1,2,3": distinct GPU indices in [0, 64), spaces around entries allowed
//         topofit.io/gpu-plan    a GpuAssignment (gpu_plan.h)
//         topofit.io/gpu-actual  a GpuAssignment
//   node  topofit.io/gpu-topology  a built-in profile name or `nvidia-smi topo -m` text, as written
//         topofit.io/gpu-uuids, topofit.io/gpu-pci-bus-ids  comma-separated, each entry trimmed
//         topofit.io/gpu-health  a GpuHealthReport (gpu_plan.h)

#include <optional>
#include <string>
#include <vector>

#include "extender/k8s/gpu_plan.h"
#include "extender/k8s/objects.h"

namespace topofit::k8s {

template <class T>
struct Decoded {
  std::optional<T> value;
  std::string error;  // Non-empty: the annotation is there but unusable; `value` is then empty.
};

inline constexpr int kMaxGpuIndex = 63;  // GpuSet holds indices 0..63.

struct PodGpuAnnotations {
  Decoded<std::vector<int>> gpu_ids;  // In the order written.
  Decoded<GpuAssignment> plan;
  Decoded<GpuAssignment> actual;
};

// Node: "MIG-a,MIG-b;MIG-c,MIG-d", each GPU's MIG devices, GPUs in index order ("" when none), published by
// the node side (extender/node/mig_listing.h).
inline constexpr const char* kGpuMigUuidsAnnotation = "topofit.io/gpu-mig-uuids";

struct NodeGpuAnnotations {
  std::optional<std::string> topology;                  // As written (may be blank).
  std::optional<std::vector<std::string>> uuids;        // Entries trimmed, possibly empty or repeated.
  std::optional<std::vector<std::string>> pci_bus_ids;  // Likewise.
  std::optional<std::string> mig_uuids;                 // As written; the topology resolver reads it.
  Decoded<GpuHealthReport> health;
};

PodGpuAnnotations DecodePodGpuAnnotations(const PodObject& pod);
NodeGpuAnnotations DecodeNodeGpuAnnotations(const NodeObject& node);

// "0,1,2,3" -> {0,1,2,3}; the decoder of topofit.io/gpu-ids.
Result<std::vector<int>> ParseGpuIds(std::string_view text);

}  // namespace topofit::k8s
