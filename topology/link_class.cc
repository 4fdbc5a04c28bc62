#include "topology/link_class.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace topofit {

std::string_view ToString(LinkClass cls) {
  switch (cls) {
    case LinkClass::Sys: return "SYS";
    case LinkClass::Node: return "NODE";
    case LinkClass::Phb: return "PHB";
    case LinkClass::Pxb: return "PXB";
    case LinkClass::Pix: return "PIX";
    case LinkClass::Nv: return "NV";
    case LinkClass::Self: return "X";
  }
  return "?";
}

std::string ToString(Link link) {
  if (link.cls == LinkClass::Nv) return "NV" + std::to_string(link.nvlinks);
  return std::string(ToString(link.cls));
}

std::optional<Link> ParseLink(std::string_view cell) {
  if (cell == "X") return Link{LinkClass::Self, 0};
  if (cell == "SYS" || cell == "SOC") return Link{LinkClass::Sys, 0};
  if (cell == "NODE") return Link{LinkClass::Node, 0};
  if (cell == "PHB") return Link{LinkClass::Phb, 0};
  if (cell == "PXB") return Link{LinkClass::Pxb, 0};
  if (cell == "PIX") return Link{LinkClass::Pix, 0};
  if (cell.size() > 2 && cell.substr(0, 2) == "NV") {
    std::string_view digits = cell.substr(2);
    unsigned count = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    if (count < 1 || count > 255) return std::nullopt;
    return Link{LinkClass::Nv, static_cast<uint8_t>(count)};
  }
  return std::nullopt;
}

std::optional<LinkClass> ParseLinkClassName(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "NV" || upper == "NVLINK") return LinkClass::Nv;
  if (upper == "PIX") return LinkClass::Pix;
  if (upper == "PXB") return LinkClass::Pxb;
  if (upper == "PHB") return LinkClass::Phb;
  if (upper == "NODE") return LinkClass::Node;
  if (upper == "SYS") return LinkClass::Sys;
  return std::nullopt;
}

}  // namespace topofit
