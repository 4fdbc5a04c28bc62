#pragma once
// DraPodAsk: the GPUs a pod asks of DRA through its own ResourceClaims (spec.resourceClaims naming a
// user-written claim, or the claim made from its ResourceClaimTemplate) or through an implicit
// extended resource name (deviceclass.resource.kubernetes.io/<class>), and per DRA node what
// kube-scheduler's allocator will give it there (docs/dra.md). Built by DraCluster::AskOf from the
// claims' requests and the nodes' slices; read by the placement pipeline (PodRequest::dra_ask).
//
// Per node, a DraNodeAsk holds each claim's requests in order, each with the GPU indices the request
// admits in the allocator's order (the class's and the request's selectors, on the node's GPUs) and
// its count (kAll for allocationMode All), and, when the claim has a matchAttribute constraint, each
// GPU's value of that attribute. PredictDraAsk replays the in-tree allocator
// (structured/internal/incubating, v1.36): claims in the pod's order, requests in the claim's order,
// each request the first free admitted GPUs not already taken; under matchAttribute the first device
// the first request admits fixes the value (the allocator backtracks to the next device whose value
// lets every request be met), and devices without the attribute are never taken; All takes every
// admitted GPU, and fails if one is not free. A GPU outside the node's slices, or a request it cannot
// meet, gives no set (nullopt), as the allocator gives none.
//
// What DraCluster::AskOf cannot predict it does not ask (no DraPodAsk, the pod scored as one without
// GPUs): a claim not yet made or already allocated, a firstAvailable request, a request with
// tolerations, a class or a selector DeviceSelector cannot read, a constraint other than one
// matchAttribute over all of a claim's requests, and on a node a request whose admitted devices
// mix GPUs and other devices (that node gets no DraNodeAsk). Plain values; thread-safe to share.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/gpu_set.h"

namespace topofit::cluster {

struct DraAskRequest {
  static constexpr int kAll = -1;
  std::vector<int> order;  // GPU indices the request admits, in the allocator's order.
  int count = 1;           // Or kAll.
};

struct DraClaimAsk {
  std::vector<DraAskRequest> requests;
  std::vector<std::string> values;  // By GPU index: the matchAttribute value ("" without it); empty: no constraint.
};

struct DraNodeAsk {
  std::vector<DraClaimAsk> claims;
  uint64_t hash = 0;  // Of everything above, never 0: tells apart asks of one topology (CycleState's memo).
  void Seal();        // Sets hash.
};

struct DraPodAsk {
  int gpus = 0;  // GPUs the pod gets: the sum of its counts (with All, the most any node gives).
  std::map<std::string, DraNodeAsk, std::less<>> nodes;  // By DRA node name.
  const DraNodeAsk* Find(std::string_view node) const {
    auto it = nodes.find(node);
    return it == nodes.end() ? nullptr : &it->second;
  }
};

std::optional<GpuSet> PredictDraAsk(const DraNodeAsk& ask, GpuSet free);

}  // namespace topofit::cluster
