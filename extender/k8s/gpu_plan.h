#pragma once
// GpuAssignment: which GPUs each container of one pod gets (topofit.io/gpu-plan, written by the
// extender's bind) or got (topofit.io/gpu-actual, written by the node side from kubelet's
// PodResources). Both annotations have the same shape:
//
//   {"v":1,"node":"<node>","containers":{"<container>":["GPU-<uuid>",...],...},"t":<unix seconds>}
//
// GPUs are named by UUID (indices are unstable: hidden, drained or renumbered GPUs shift them).
// Containers appear in the pod's spec order (init containers first); a container with no GPUs is
// left out. A regular init container may name GPUs that app containers name too (kubelet lets app
// containers reuse an init container's devices); nothing else repeats.
//
// ParseGpuAssignment accepts exactly that shape: "v" must be 1, "node" a non-empty string,
// "containers" an object of non-empty container names to arrays of UUID strings (non-empty,
// no whitespace, no comma, no repeats within a container), "t" an integer (optional, 0 when
// absent). Unknown keys are ignored (a later version adds fields, not meanings). Errors say what
// is wrong, e.g. "containers.trainer[1]: expected a string". Encode gives the canonical text
// (keys in the order above, no spaces).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace topofit::k8s {

inline constexpr const char* kGpuPlanAnnotation = "topofit.io/gpu-plan";      // pod, by topofit's bind
inline constexpr const char* kGpuActualAnnotation = "topofit.io/gpu-actual";  // pod, by the node side
// Node annotations the node side publishes (see extender/node/topology_report.h).
inline constexpr const char* kGpuUuidsAnnotation = "topofit.io/gpu-uuids";    // "GPU-a,GPU-b", index order
inline constexpr const char* kGpuPciAnnotation = "topofit.io/gpu-pci-bus-ids";  // "00000000:07:00.0,..."
// {"v":1,"unhealthy":["GPU-..."],"t":<unix seconds>}: written by the node side, which reads device
// health from the device plugin; its presence says the node reports health and gpu-actual.
inline constexpr const char* kGpuHealthAnnotation = "topofit.io/gpu-health";

struct GpuAssignment {
  std::string node;
  std::vector<std::pair<std::string, std::vector<std::string>>> containers;  // name -> UUIDs
  int64_t unix_seconds = 0;

  // Every UUID named, each once, in first-seen order.
  std::vector<std::string> AllUuids() const;
  // The UUIDs of `container`; nullptr when the assignment does not name it.
  const std::vector<std::string>* Find(std::string_view container) const;
  friend bool operator==(const GpuAssignment&, const GpuAssignment&) = default;
};

Result<GpuAssignment> ParseGpuAssignment(std::string_view text);
std::string EncodeGpuAssignment(const GpuAssignment& a);

struct GpuHealthReport {
  std::vector<std::string> unhealthy;  // UUIDs
  int64_t unix_seconds = 0;
};
// {"v":1,"unhealthy":[...],"t":...}: "unhealthy" an array of UUID strings (may be empty).
Result<GpuHealthReport> ParseGpuHealth(std::string_view text);
std::string EncodeGpuHealth(const GpuHealthReport& r);

}  // namespace topofit::k8s
