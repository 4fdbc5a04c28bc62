#pragma once
// PcieGroups: which devices of a TopoMatrix share each PCIe level - a PCIe switch (PIX), a bridge
// complex (PXB), a host bridge (PHB), a NUMA node (NODE) - as the matrix's classes imply, and whether
// those groups give every PCIe pair of the matrix its class back (then the matrix is one PCIe tree).
//
// Devices are numbered GPUs first, then NICs. Two devices are in one group of a level when a chain of
// pairs at least that level's class joins them. Pairs joined by NVLink say nothing about PCIe and are
// skipped, except that two NVLink GPUs of one NUMA Affinity (or, lacking NUMA Affinity, one CPU
// Affinity) are put in one NUMA node. Not one tree is not an error here: FindTreeConflict reports the
// first pair whose class the groups do not give back, and NodeGraph decides what to do with it. Pure
// functions of the matrix; never fail.

#include <optional>
#include <string>
#include <vector>

#include "topology/link_class.h"
#include "topology/topo_matrix.h"

namespace topofit {

constexpr int kPcieLevels = 4;  // PIX, PXB, PHB, NODE groups, finest first.
constexpr int kNumaLevel = 3;

// Link between devices a and b; their name ("GPU0", "mlx5_3").
Link DeviceLink(const TopoMatrix& m, int a, int b);
std::string DeviceName(const TopoMatrix& m, int d);
// Entry i of a per-GPU vector, or T{} when the vector is shorter (matrices built in code may omit it).
template <typename T>
T PerGpu(const std::vector<T>& v, int i) { return i < static_cast<int>(v.size()) ? v[i] : T{}; }

struct PcieGroups {
  // root[level][device]: devices with the same root share that level's group.
  std::vector<std::vector<int>> root;
};

// numa_by_affinity: also put NVLink GPUs of one NUMA Affinity in one NUMA node (see above).
PcieGroups GroupDevices(const TopoMatrix& m, bool numa_by_affinity = true);

struct TreeConflict {
  int a = 0, b = 0;         // The first pair, in device order, whose class the groups do not give back.
  LinkClass said;           // What the matrix says.
  LinkClass derived;        // What the groups give.
  int pairs = 0;            // How many pairs disagree in all.
};

// nullopt when every PCIe pair of the matrix gets its class back from `groups`.
std::optional<TreeConflict> FindTreeConflict(const TopoMatrix& m, const PcieGroups& groups);

// The NUMA node number shared by the GPUs of NUMA group `group`; nullopt if none is known or they differ.
std::optional<int> NumaLabel(const TopoMatrix& m, const PcieGroups& groups, int group);

}  // namespace topofit
