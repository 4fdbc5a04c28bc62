// PcieGroups: see pcie_groups.h for the contract.

#include "topology/pcie_groups.h"

#include <numeric>

namespace topofit {

namespace {

constexpr LinkClass kLevelClass[kPcieLevels] = {LinkClass::Pix, LinkClass::Pxb, LinkClass::Phb, LinkClass::Node};

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) { return parent_[x] == x ? x : parent_[x] = Find(parent_[x]); }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

// Two GPUs joined by NVLink hide their PCIe relation; they share a NUMA node when NUMA Affinity (or,
// lacking it, the CPU Affinity list) says so.
bool SameNumaByAffinity(const TopoMatrix& m, int a, int b) {
  auto na = PerGpu(m.numa_affinity, a), nb = PerGpu(m.numa_affinity, b);
  if (na || nb) return na && nb && *na == *nb;
  std::string ca = PerGpu(m.cpu_affinity, a), cb = PerGpu(m.cpu_affinity, b);
  return !ca.empty() && ca == cb;
}

}  // namespace

Link DeviceLink(const TopoMatrix& m, int a, int b) {
  const int g = m.gpu_count();
  if (a < g && b < g) return m.gpu_links[a][b];
  if (a < g) return m.gpu_nic[a][b - g];
  if (b < g) return m.gpu_nic[b][a - g];
  return m.nic_links[a - g][b - g];
}

std::string DeviceName(const TopoMatrix& m, int d) {
  return d < m.gpu_count() ? m.gpu_names[d] : m.nic_names[d - m.gpu_count()];
}

PcieGroups GroupDevices(const TopoMatrix& m, bool numa_by_affinity) {
  const int d = m.gpu_count() + m.nic_count();
  std::vector<UnionFind> uf(kPcieLevels, UnionFind(d));
  for (int a = 0; a < d; ++a) {
    for (int b = a + 1; b < d; ++b) {
      Link l = DeviceLink(m, a, b);
      for (int lv = 0; lv < kPcieLevels; ++lv) {
        if (l.cls != LinkClass::Nv && l.cls >= kLevelClass[lv]) uf[lv].Union(a, b);
      }
      if (numa_by_affinity && l.cls == LinkClass::Nv && SameNumaByAffinity(m, a, b)) uf[kNumaLevel].Union(a, b);
    }
  }
  PcieGroups groups{std::vector<std::vector<int>>(kPcieLevels, std::vector<int>(d))};
  for (int lv = 0; lv < kPcieLevels; ++lv) {
    for (int x = 0; x < d; ++x) groups.root[lv][x] = uf[lv].Find(x);
  }
  return groups;
}

std::optional<TreeConflict> FindTreeConflict(const TopoMatrix& m, const PcieGroups& groups) {
  const int d = m.gpu_count() + m.nic_count();
  std::optional<TreeConflict> first;
  int pairs = 0;
  for (int a = 0; a < d; ++a) {
    for (int b = a + 1; b < d; ++b) {
      Link l = DeviceLink(m, a, b);
      if (l.cls == LinkClass::Nv) continue;
      LinkClass derived = LinkClass::Sys;
      for (int lv = kPcieLevels - 1; lv >= 0; --lv) {
        if (groups.root[lv][a] == groups.root[lv][b]) derived = kLevelClass[lv];
      }
      if (derived == l.cls) continue;
      ++pairs;
      if (!first) first = TreeConflict{a, b, l.cls, derived, 0};
    }
  }
  if (first) first->pairs = pairs;
  return first;
}

std::optional<int> NumaLabel(const TopoMatrix& m, const PcieGroups& groups, int group) {
  std::optional<int> label;
  for (int y = 0; y < m.gpu_count(); ++y) {
    if (groups.root[kNumaLevel][y] != group) continue;
    std::optional<int> n = PerGpu(m.numa_affinity, y);
    if (n && label && *n != *label) return std::nullopt;
    if (n) label = n;
  }
  return label;
}

}  // namespace topofit
