#pragma once
// Holding: one pod's claim on GPUs of one node - a bound pod, or a reservation made by bind. Bound
// pods without GPUs are holdings too (count 0), so that the node's used CPU and memory are known.
//
// `claimed` is what the pod says it has (its topofit.io/gpu-ids annotation, or the set our bind
// chose). `gpus` is what the model counts against the node: `claimed` when it is valid and no
// earlier holding has any of those GPUs; otherwise a pessimistic placement of `count` GPUs (the best
// free set of that size - the GPUs whose loss hurts most), with `unknown_identity` set and, for an
// invalid or conflicting claim, `conflict` saying why. A claim that collides with an earlier holder
// keeps its uncontested GPUs; only the ones it lost are placed pessimistically. NodeState recomputes `gpus` on every change.
//
// Plans and observations (per container, by GPU UUID; extender/k8s/gpu_plan.h): `plan` is
// topofit.io/gpu-plan, `actual` is topofit.io/gpu-actual, written by the node side from kubelet's
// PodResources. NodeState maps their UUIDs to indices with the node's published UUID map. Actual
// beats plan: an observed set is counted first, before any plan or gpu-ids claim. On a node without
// a UUID map the plan cannot be resolved and gpu-ids is the claim. See GpuState in model_views.h for
// what each GPU's state is then.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include "extender/k8s/gpu_plan.h"
#include "extender/cluster/clock.h"
#include "topology/gpu_set.h"

namespace topofit::cluster {

enum class HoldingKind : uint8_t {
  kBound,      // The API server says the pod runs on the node (snapshot or watch).
  kReserved,   // Bind chose the GPUs; the API writes are in flight. Expires at `expires`.
  kConfirmed,  // Bind's API writes succeeded; waits for the watch to report the bound pod. No expiry.
};

std::string_view ToString(HoldingKind kind);  // "bound", "reserved", "confirmed"

// What the model knows about a holding's GPUs (computed by NodeState).
enum class HoldState : uint8_t {
  kPlanned,  // Placed by topofit (plan, gpu-ids or our own bind), not observed on the node yet.
  kInUse,    // Observed: topofit.io/gpu-actual names the GPUs its containers hold.
  kForeign,  // Not placed by topofit: bound by another scheduler or by hand, observed or not.
};
std::string_view ToString(HoldState state);  // "planned", "in-use", "foreign"

struct Holding {
  std::string uid;
  std::string pod;             // "namespace/name"
  int count = 0;               // GPUs the pod holds.
  GpuSet claimed;              // Empty when the pod named no GPUs.
  std::string claim_error;     // The annotation was there but unusable ("'0,x' is not a GPU list").
  GpuSet gpus;                 // Counted against the node (see above).
  bool unknown_identity = false;
  std::string conflict;        // Why `claimed` was not honoured; "" when it was (or there was none).
  HoldingKind kind = HoldingKind::kBound;
  int32_t priority = 0;
  std::string pod_group;       // kBound: the Workload API PodGroup it names (spec.schedulingGroup), "" for none.
  int64_t cpu_milli = 0;       // The pod's CPU and memory requests (pods without GPUs hold only these).
  int64_t memory_bytes = 0;
  TimePoint expires{};         // kReserved only.
  uint64_t seq = 0;            // Arrival order; the first claimant of a GPU keeps it.

  // Inputs from the pod (ClusterModel::ApplyPod).
  std::optional<k8s::GpuAssignment> plan;    // topofit.io/gpu-plan
  std::optional<k8s::GpuAssignment> actual;  // topofit.io/gpu-actual
  std::string plan_error;                    // The annotation was there but unusable.
  std::string actual_error;
  bool terminating = false;  // deletionTimestamp set: the pod still holds its GPUs until it is gone.
  // A bound, planned pod on a node that reports observations must be observed by then, or its
  // plan is dropped (it keeps `count` GPUs of unknown identity). NodeState keeps the first deadline.
  TimePoint plan_deadline = TimePoint::max();

  // Computed by NodeState.
  HoldState state = HoldState::kPlanned;
  bool plan_expired = false;
  GpuSet observed;  // Every GPU `actual` names (unhealthy ones included); empty when not observed.
  std::vector<std::pair<std::string, GpuSet>> containers;  // Per container: actual, else plan.
};

}  // namespace topofit::cluster
