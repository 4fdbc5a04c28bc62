#pragma once
// Holding: one pod's claim on GPUs of one node - a bound pod, or a reservation made by bind. Bound
// pods without GPUs are holdings too (count 0), so that the node's used CPU and memory are known.
//
// `claimed` is what the pod says it has (its topofit.io/gpu-ids annotation, or the set our bind
// chose). `gpus` is what the model counts against the node: `claimed` when it is valid and no
// earlier holding has any of those GPUs; otherwise a pessimistic placement of `count` GPUs (the best
// free set of that size - the GPUs whose loss hurts most), with `unknown_identity` set and, for an
// invalid or conflicting claim, `conflict` saying why. NodeState recomputes `gpus` on every change.

#include <cstdint>
#include <string>
#include <string_view>

#include "extender/model/clock.h"
#include "topology/gpu_set.h"

namespace topofit::model {

enum class HoldingKind : uint8_t {
  kBound,      // The API server says the pod runs on the node (snapshot or watch).
  kReserved,   // Bind chose the GPUs; the API writes are in flight. Expires at `expires`.
  kConfirmed,  // Bind's API writes succeeded; waits for the watch to report the bound pod. No expiry.
};

std::string_view ToString(HoldingKind kind);  // "bound", "reserved", "confirmed"

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
  int64_t cpu_milli = 0;       // The pod's CPU and memory requests (pods without GPUs hold only these).
  int64_t memory_bytes = 0;
  TimePoint expires{};         // kReserved only.
  uint64_t seq = 0;            // Arrival order; the first claimant of a GPU keeps it.
};

}  // namespace topofit::model
