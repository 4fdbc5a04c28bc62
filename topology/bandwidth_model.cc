// BandwidthModel: see bandwidth_model.h for the contract.

#include "topology/bandwidth_model.h"

#include <algorithm>

namespace topofit {

namespace {

// PCIe x16 raw bandwidth per direction in GB/s: 16 lanes x transfer rate x 128b/130b / 8 bits
// (PCI-SIG base specifications: gen3 8 GT/s, gen4 16 GT/s, gen5 32 GT/s).
constexpr double kPcieX16RawGbps[] = {15.75, 31.5, 63.0};  // gen3, gen4, gen5

// Effective peer-to-peer share of the raw rate, by how far up the tree the traffic climbs. Calibrated
// on gen3: behind one switch, P2P copies reach about 12-13 GB/s (the fixtures README quotes 10-16
// GB/s effective for gen3 x16), ~80% of raw after TLP/DLLP overhead. Each extra bridge costs a
// little; forwarding through the CPU root complex (PHB) costs more; crossing between host bridges of
// one socket (NODE) more again; crossing the SMP interconnect (SYS: QPI/UPI/Infinity Fabric) is much
// slower, which is why NCCL stages cross-socket traffic through host memory. The exact figures are a
// model choice; the strict order PIX > PXB > PHB > NODE > SYS is the contract placement relies on.
constexpr double kPixShare = 0.80;   // gen3 12.6, gen4 25.2, gen5 50.4 GB/s
constexpr double kPxbShare = 0.75;   // gen3 11.8, gen4 23.6, gen5 47.3 GB/s
constexpr double kPhbShare = 0.65;   // gen3 10.2, gen4 20.5, gen5 41.0 GB/s
constexpr double kNodeShare = 0.50;  // gen3  7.9, gen4 15.8, gen5 31.5 GB/s
constexpr double kSysShare = 0.25;   // gen3  3.9, gen4  7.9, gen5 15.8 GB/s

}  // namespace

BandwidthModel BandwidthModel::For(int pcie_gen, double nvlink_per_link) {
  BandwidthModel b;
  b.pcie_gen = std::clamp(pcie_gen, 3, 5);
  b.nvlink_per_link = nvlink_per_link;
  const double raw = kPcieX16RawGbps[b.pcie_gen - 3];
  b.pix = raw * kPixShare;
  b.pxb = raw * kPxbShare;
  b.phb = raw * kPhbShare;
  b.node = raw * kNodeShare;
  b.sys = raw * kSysShare;
  return b;
}

double BandwidthModel::ForLink(LinkClass cls, int nvlinks) const {
  switch (cls) {
    case LinkClass::Nv: return nvlinks * nvlink_per_link;
    case LinkClass::Pix: return pix;
    case LinkClass::Pxb: return pxb;
    case LinkClass::Phb: return phb;
    case LinkClass::Node: return node;
    case LinkClass::Sys: return sys;
    case LinkClass::Self: return 0;
  }
  return 0;
}

}  // namespace topofit
