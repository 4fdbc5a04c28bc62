#pragma once
// LinkClass: how two devices of one node are connected, in the vocabulary of `nvidia-smi topo -m`.
//
// Ordered from worst to best so that `a < b` means "a is a slower kind of link than b":
//   SYS  < NODE < PHB < PXB < PIX < NV
// A Link adds the NVLink count for NV (NV1, NV2, NV12, NV18...); for every other class it is 0.
// `Self` is the diagonal ("X") and never appears between two distinct devices.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace topofit {

enum class LinkClass : uint8_t { Sys = 0, Node = 1, Phb = 2, Pxb = 3, Pix = 4, Nv = 5, Self = 6 };

struct Link {
  LinkClass cls = LinkClass::Sys;
  uint8_t nvlinks = 0;  // Number of bonded NVLinks when cls == Nv, else 0.

  friend bool operator==(const Link&, const Link&) = default;
  // Better link first: more NVLinks beat fewer, any NVLink beats PCIe.
  friend bool operator<(const Link& a, const Link& b) {
    if (a.cls != b.cls) return a.cls < b.cls;
    return a.nvlinks < b.nvlinks;
  }
};

// "SYS", "NODE", "PHB", "PXB", "PIX", "NV12", "X".
std::string ToString(Link link);
std::string_view ToString(LinkClass cls);  // "NV" for Nv.

// Parses one matrix cell: "X", "SYS", "NODE", "PHB", "PXB", "PIX" or "NV<count>" with count 1..255.
// "SOC" is what older drivers print (and their legends define) for SYS, and parses as SYS; ToString
// then says "SYS". Case-sensitive, as nvidia-smi prints it; surrounding whitespace must already be
// stripped.
std::optional<Link> ParseLink(std::string_view cell);

// Parses a class name as users write it in annotations: "NV" (any NVLink), "PIX", "PXB", "PHB",
// "NODE", "SYS" (case-insensitive). Used for `topofit.io/min-link`.
std::optional<LinkClass> ParseLinkClassName(std::string_view name);

}  // namespace topofit
