#pragma once
// MIG devices per physical GPU, from `nvidia-smi -L`: which MIG device (kubelet knows it by its UUID,
// "MIG-...", as the NVIDIA device plugin advertises it) is on which GPU. `topofit node` publishes the
// map as topofit.io/gpu-mig-uuids so that the extender can name MIG devices in its plans
// (docs/shared-gpus.md).
//
// ParseMigListing reads lines of the two shapes nvidia-smi prints (other lines are ignored):
//   GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5d5ba0d6-...)
//     MIG 1g.10gb     Device  0: (UUID: MIG-c6d4f1ef-...)
// A MIG line belongs to the GPU line above it. GPU i must carry gpu_uuids[i] (the UUIDs the publisher
// took from --query-gpu), in index order. Errors: a MIG line before any GPU line, a GPU index or UUID
// that disagrees with gpu_uuids, a GPU listed twice or missing, a line of those shapes without a
// "(UUID: ...)". A listing without MIG lines is not an error: every GPU has no MIG device.
// EncodeMigUuids: "MIG-a,MIG-b;MIG-c,MIG-d" - each GPU's devices in listing order, GPUs in index
// order, ";" between GPUs; "" when no GPU has a MIG device. Pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace topofit::node {

inline constexpr const char* kMigUuidsAnnotation = "topofit.io/gpu-mig-uuids";

using MigDevices = std::vector<std::vector<std::string>>;  // Per physical GPU, its MIG devices' UUIDs.

Result<MigDevices> ParseMigListing(std::string_view listing, const std::vector<std::string>& gpu_uuids);
std::string EncodeMigUuids(const MigDevices& devices);

}  // namespace topofit::node
