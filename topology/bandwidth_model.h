#pragma once
// BandwidthModel: the per-direction bandwidth (GB/s) topofit gives each link class of
// `nvidia-smi topo -m` - NV# by its link count, the PCIe classes by the PCIe generation.
//
// Contract: for every generation, PIX > PXB > PHB > NODE > SYS strictly, and SYS is at most half of
// NODE; NV# is # times the per-link rate. The figures and where they come from are in
// bandwidth_model.cc. A value type; pure functions; never fails.

#include "topology/link_class.h"

namespace topofit {

struct BandwidthModel {
  int pcie_gen = 3;
  double nvlink_per_link = 25.0;
  double pix = 0, pxb = 0, phb = 0, node = 0, sys = 0;  // By the class of the path between devices.

  // The model for a PCIe generation (3, 4 or 5; others are clamped) and an NVLink per-link rate.
  static BandwidthModel For(int pcie_gen, double nvlink_per_link = 25.0);
  // Bandwidth of a pair of the given matrix class (NV uses the link count; Self is 0).
  double ForLink(LinkClass cls, int nvlinks) const;
};

}  // namespace topofit
