#pragma once
// SharedDevices: what each nvidia.com/gpu device of a node is when its GPUs are shared - a replica
// of physical GPU g (time-slicing, MPS) or a MIG device on GPU g (MIG single strategy) - read from
// the GPU Feature Discovery labels (docs/shared-gpus.md cites the NVIDIA documents they follow):
//   time-slicing / MPS: nvidia.com/gpu.sharing-strategy = time-slicing | mps, nvidia.com/gpu.replicas
//     = R, nvidia.com/gpu.count = the physical GPUs, nvidia.com/gpu.product ends in "-SHARED";
//     the device plugin advertises count * R devices.
//   MIG single: nvidia.com/mig.strategy = single and nvidia.com/gpu.product "<product>-MIG-<profile>"
//     (e.g. "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"); nvidia.com/gpu.count there counts MIG devices, so
//     the physical GPUs are allocatable / (devices per GPU of the profile).
// Numbering (the model's GpuSet indices on such a node): device d is on physical GPU d / per_gpu,
// slot d % per_gpu (its replica, or its MIG device on that GPU). Which MIG device is which kubelet
// id the labels do not say; the node side will.
//
// Not an error: a node without these labels (ReadSharing gives nullopt), labels that disagree with
// allocatable (a warning; the devices are modelled from allocatable), more than 64 devices (capped, a
// warning). Values only; thread-safe as any const object.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "topology/gpu_set.h"
#include "topology/topo_matrix.h"

namespace topofit::cluster {

enum class SharingMode : uint8_t { kNone, kTimeSlicing, kMps, kMigSingle };

// "none", "time-slicing", "mps", "mig-single".
std::string_view ToString(SharingMode mode);

struct SharedDevices {
  SharingMode mode = SharingMode::kNone;
  int gpus = 0;           // Physical GPUs modelled.
  int per_gpu = 1;        // Devices per physical GPU: replicas, or MIG devices of the profile.
  std::string mig_profile;      // "1g.10gb"; "" unless MIG.
  int mig_compute_slices = 0;   // The profile's "<g>g": compute slices of one MIG device.
  int mig_memory_gb = 0;        // The profile's "<mem>gb".
  int gpu_compute_slices = 0;   // Compute slices of the whole GPU (7; 4 on A30).

  bool shared() const { return mode != SharingMode::kNone; }
  bool mig() const { return mode == SharingMode::kMigSingle; }
  int devices() const { return shared() ? gpus * per_gpu : gpus; }
  int GpuOf(int device) const { return shared() ? device / per_gpu : device; }
  int SlotOf(int device) const { return shared() ? device % per_gpu : 0; }
  GpuSet DevicesOf(int gpu) const;
  // The devices of every GPU in `gpus` (physical indices).
  GpuSet DevicesOfGpus(GpuSet gpus) const;
  // Physical GPUs with at least one device in `devices`.
  GpuSet GpusOf(GpuSet devices) const;
  // Physical GPUs with usable devices all of which are free: the GPUs a whole-GPU pod could have.
  GpuSet WholeFree(GpuSet usable, GpuSet free) const;
  // The free devices the placer may choose `count` of: every free device when not shared or when
  // `packed` replicas are allowed; one per GPU with a free replica otherwise (so a pod gets distinct
  // GPUs); for MIG, the `count` devices of the GPUs with the fewest free devices (best fit, so that
  // whole GPUs stay free). Fewer free devices than `count`: `free` as it is (the placer finds none).
  GpuSet Offerable(GpuSet free, int count, bool packed) const;
  // "replica 2" / "MIG 1g.10gb #2"; "" when not shared.
  std::string DeviceName(int device) const;
};

// "NVIDIA-A100-SXM4-80GB-SHARED" -> "NVIDIA-A100-SXM4-80GB"; "...-MIG-1g.10gb" likewise; others as given.
std::string_view StripSharingSuffix(std::string_view product);

// The sharing the node's labels describe; nullopt when they describe none (or strategy "none").
// `allocatable` is the node's nvidia.com/gpu; disagreements are warnings.
std::optional<SharedDevices> ReadSharing(const std::map<std::string, std::string>& labels, int allocatable,
                                         std::vector<std::string>& warnings);

// The matrix of the devices: each inherits its GPU's NUMA, CPU and NIC affinity. Replicas of
// different GPUs are linked as their GPUs; two replicas of one GPU get that GPU's best link (PIX at
// least: they share its memory). MIG devices have no NVLink or P2P: every pair is NODE when both GPUs
// sit on one NUMA node (or the matrix does not say), SYS otherwise. Error: more than 64 devices.
Result<TopoMatrix> DeviceMatrix(const TopoMatrix& physical, const SharedDevices& shared);

}  // namespace topofit::cluster
