#pragma once
// PairMatrix generators for SetSelector's tests and benchmark: real machine shapes and random ones.
//
// Bandwidths follow the link class (MB/s per direction): NV# = 25000 per bonded link (NV1 25000,
// NV2 50000, NV12 300000), PIX 12000, PXB 11000, PHB 10000, NODE 8000, SYS 6000. Test-only code;
// header-only so that the test binary and the benchmark share it without a library.

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "topology/pair_matrix.h"

namespace topofit::testing {

inline uint32_t NominalMbps(Link l) {
  switch (l.cls) {
    case LinkClass::Nv: return 25000u * l.nvlinks;
    case LinkClass::Pix: return 12000;
    case LinkClass::Pxb: return 11000;
    case LinkClass::Phb: return 10000;
    case LinkClass::Node: return 8000;
    case LinkClass::Sys: return 6000;
    case LinkClass::Self: return 0;
  }
  return 0;
}

inline void SetNominal(PairMatrix& p, int a, int b, Link l) { p.Set(a, b, l, NominalMbps(l)); }

// Every pair SYS.
inline PairMatrix AllSys(int n) {
  PairMatrix p(n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) SetNominal(p, a, b, {LinkClass::Sys, 0});
  return p;
}

// DGX-1 (V100) hybrid cube mesh, as `nvidia-smi topo -m` prints it. The NV2 links form the
// Hamiltonian cycle 0-3-2-1-5-6-7-4-0; {0,1,2,3} and {4,5,6,7} are fully NVLinked quads.
inline PairMatrix Dgx1() {
  PairMatrix p = AllSys(8);
  const Link nv1{LinkClass::Nv, 1}, nv2{LinkClass::Nv, 2};
  const std::pair<int, int> one[] = {{0, 1}, {0, 2}, {1, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {5, 7}};
  const std::pair<int, int> two[] = {{0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {4, 7}, {5, 6}, {6, 7}};
  for (auto [a, b] : one) SetNominal(p, a, b, nv1);
  for (auto [a, b] : two) SetNominal(p, a, b, nv2);
  return p;
}

// Two DGX-1 cube meshes (GPUs 0-7 and 8-15) joined by one NV1 link between GPU i and i + 8.
inline PairMatrix HybridMesh16() {
  PairMatrix d = Dgx1(), p = AllSys(16);
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) {
      p.Set(a, b, d.link(a, b), d.bw(a, b));
      p.Set(a + 8, b + 8, d.link(a, b), d.bw(a, b));
    }
    SetNominal(p, a, a + 8, {LinkClass::Nv, 1});
  }
  return p;
}

// n GPUs on one NVSwitch fabric: every pair NV12.
inline PairMatrix NvSwitch(int n) {
  PairMatrix p(n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) SetNominal(p, a, b, {LinkClass::Nv, 12});
  return p;
}

// Two 8-GPU NVSwitch islands (0-7, 8-15), SYS between them.
inline PairMatrix TwoIslands16() {
  PairMatrix p = AllSys(16);
  for (int a = 0; a < 16; ++a)
    for (int b = a + 1; b < 16; ++b)
      if (a / 8 == b / 8) SetNominal(p, a, b, {LinkClass::Nv, 12});
  return p;
}

// A PCIe tree: pairs under one switch (PIX), pairs of switches under one bridge (PXB), halves of
// the node under one host bridge or NUMA node (`upper`: PHB or NODE), SYS across sockets.
inline PairMatrix PcieTree(int n, LinkClass upper) {
  PairMatrix p(n);
  const int half = (n + 1) / 2;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      LinkClass c = a / 2 == b / 2 ? LinkClass::Pix
                    : a / 4 == b / 4 ? LinkClass::Pxb
                    : a / half == b / half ? upper
                                           : LinkClass::Sys;
      SetNominal(p, a, b, {c, 0});
    }
  }
  return p;
}

// Random classes per pair; bandwidth nominal or, half the time, jittered within its class so that
// both exact ties and near-ties occur.
inline PairMatrix RandomMatrix(std::mt19937_64& rng, int n) {
  static const Link kLinks[] = {{LinkClass::Sys, 0}, {LinkClass::Node, 0}, {LinkClass::Phb, 0},
                                {LinkClass::Pxb, 0}, {LinkClass::Pix, 0},  {LinkClass::Nv, 1},
                                {LinkClass::Nv, 2},  {LinkClass::Nv, 4},   {LinkClass::Nv, 1}};
  const bool jitter = rng() % 2;
  PairMatrix p(n);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const Link l = kLinks[rng() % std::size(kLinks)];
      p.Set(a, b, l, NominalMbps(l) + (jitter ? uint32_t(rng() % 500) : 0));
    }
  }
  return p;
}

// Replaces `count` random NVLink pairs by SYS (a failed or absent NVLink bridge).
inline PairMatrix Degrade(std::mt19937_64& rng, PairMatrix p, int count) {
  std::vector<std::pair<int, int>> nv;
  for (int a = 0; a < p.n; ++a)
    for (int b = a + 1; b < p.n; ++b)
      if (p.link(a, b).cls == LinkClass::Nv) nv.push_back({a, b});
  std::shuffle(nv.begin(), nv.end(), rng);
  for (int i = 0; i < count && i < int(nv.size()); ++i) {
    SetNominal(p, nv[i].first, nv[i].second, {LinkClass::Sys, 0});
  }
  return p;
}

}  // namespace topofit::testing
