// Built-in profiles. Each is the text `nvidia-smi topo -m` prints on that machine, parsed by the same
// parser as agent-published matrices. Where a real published output exists (the fixtures under
// shared/fixtures/topo), the profile reproduces it; the others follow the vendor's published layout.

#include "topology/profiles.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>

#include <fmt/format.h>

#include "topology/gpu_set.h"
#include "topology/topo_parser.h"

namespace topofit {

namespace {

// DGX-1 / HGX-1 with V100-SXM2: the hybrid cube-mesh. Each V100 has 6 NVLinks; 4 peers per GPU, two
// of them doubled (NV2). Exactly the published fixture dgx1-v100-hybrid-cube-mesh.txt (one IB NIC),
// plus the NUMA Affinity its CPU Affinity implies (GPU0-3 on the socket of CPUs 0-11,24-35).
constexpr const char* kDgx1V100 =
    "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    mlx5_0  CPU Affinity    NUMA Affinity\n"
    "GPU0     X      NV1     NV1     NV2     NV2     SYS     SYS     SYS     NODE    0-11,24-35      0\n"
    "GPU1    NV1      X      NV2     NV1     SYS     NV2     SYS     SYS     NODE    0-11,24-35      0\n"
    "GPU2    NV1     NV2      X      NV2     SYS     SYS     NV1     SYS     PIX     0-11,24-35      0\n"
    "GPU3    NV2     NV1     NV2      X      SYS     SYS     SYS     NV1     PIX     0-11,24-35      0\n"
    "GPU4    NV2     SYS     SYS     SYS      X      NV1     NV1     NV2     SYS     12-23,36-47     1\n"
    "GPU5    SYS     NV2     SYS     SYS     NV1      X      NV2     NV1     SYS     12-23,36-47     1\n"
    "GPU6    SYS     SYS     NV1     SYS     NV1     NV2      X      NV2     SYS     12-23,36-47     1\n"
    "GPU7    SYS     SYS     SYS     NV1     NV2     NV1     NV2      X      SYS     12-23,36-47     1\n"
    "mlx5_0  NODE    NODE    PIX     PIX     SYS     SYS     SYS     SYS      X\n";

// AWS p4d.24xlarge (fixture p4d-24xlarge.txt): 8x A100-SXM4 on NVSwitch (NV12), NUMA 0 and 1. The EFA
// adapters do not appear in nvidia-smi's matrix, so neither do NICs here.
constexpr const char* kHgxA100x8 =
    "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
    "GPU0     X      NV12    NV12    NV12    NV12    NV12    NV12    NV12    0-23,48-71      0               N/A\n"
    "GPU1    NV12     X      NV12    NV12    NV12    NV12    NV12    NV12    0-23,48-71      0               N/A\n"
    "GPU2    NV12    NV12     X      NV12    NV12    NV12    NV12    NV12    0-23,48-71      0               N/A\n"
    "GPU3    NV12    NV12    NV12     X      NV12    NV12    NV12    NV12    0-23,48-71      0               N/A\n"
    "GPU4    NV12    NV12    NV12    NV12     X      NV12    NV12    NV12    24-47,72-95     1               N/A\n"
    "GPU5    NV12    NV12    NV12    NV12    NV12     X      NV12    NV12    24-47,72-95     1               N/A\n"
    "GPU6    NV12    NV12    NV12    NV12    NV12    NV12     X      NV12    24-47,72-95     1               N/A\n"
    "GPU7    NV12    NV12    NV12    NV12    NV12    NV12    NV12     X      24-47,72-95     1               N/A\n";

// DGX A100 (fixture dgx-a100-10nic.txt): 8x A100-SXM4 on NVSwitch (NV12); each pair of GPUs shares a
// PCIe switch complex (PXB) with two compute NICs; NIC8/NIC9 are the storage pair. NPS4: NUMA 3, 1, 7, 5.
constexpr const char* kDgxA100 =
    "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    NIC1    NIC2    NIC3    NIC4    NIC5    NIC6    NIC7    NIC8    NIC9    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
    "GPU0     X      NV12    NV12    NV12    NV12    NV12    NV12    NV12    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     48-63,176-191   3               N/A\n"
    "GPU1    NV12     X      NV12    NV12    NV12    NV12    NV12    NV12    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     48-63,176-191   3               N/A\n"
    "GPU2    NV12    NV12     X      NV12    NV12    NV12    NV12    NV12    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     16-31,144-159   1               N/A\n"
    "GPU3    NV12    NV12    NV12     X      NV12    NV12    NV12    NV12    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     16-31,144-159   1               N/A\n"
    "GPU4    NV12    NV12    NV12    NV12     X      NV12    NV12    NV12    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     112-127,240-255 7               N/A\n"
    "GPU5    NV12    NV12    NV12    NV12    NV12     X      NV12    NV12    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     112-127,240-255 7               N/A\n"
    "GPU6    NV12    NV12    NV12    NV12    NV12    NV12     X      NV12    SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     80-95,208-223   5               N/A\n"
    "GPU7    NV12    NV12    NV12    NV12    NV12    NV12    NV12     X      SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     80-95,208-223   5               N/A\n"
    "NIC0    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS\n"
    "NIC1    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS\n"
    "NIC2    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS     SYS     SYS     SYS     SYS\n"
    "NIC3    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS     SYS     SYS     SYS     SYS\n"
    "NIC4    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS     SYS     SYS\n"
    "NIC5    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS     SYS     SYS\n"
    "NIC6    SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS\n"
    "NIC7    SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS\n"
    "NIC8    SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS      X      PIX\n"
    "NIC9    SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     PIX      X \n";

// 8 GPUs on NV18 NVSwitch with one compute NIC per GPU behind the GPU's PCIe switch (PIX), the other
// NICs of the socket at NODE and those of the other socket at SYS: the DGX/HGX H100 layout (8x
// ConnectX-7, 2x 56-core Xeon 8480C; storage and management NICs left out). HGX H200 and B200 boards
// keep the same layout. B200's NVLink 5 doubles the per-link rate, which the matrix cannot show; the
// model's 25 GB/s per link is then pessimistic by half, the same for every pair.
constexpr const char* kHgxNv18x8 =
    "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    NIC1    NIC2    NIC3    NIC4    NIC5    NIC6    NIC7    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
    "GPU0     X      NV18    NV18    NV18    NV18    NV18    NV18    NV18    PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS     0-55,112-167    0               N/A\n"
    "GPU1    NV18     X      NV18    NV18    NV18    NV18    NV18    NV18    NODE    PIX     NODE    NODE    SYS     SYS     SYS     SYS     0-55,112-167    0               N/A\n"
    "GPU2    NV18    NV18     X      NV18    NV18    NV18    NV18    NV18    NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS     0-55,112-167    0               N/A\n"
    "GPU3    NV18    NV18    NV18     X      NV18    NV18    NV18    NV18    NODE    NODE    NODE    PIX     SYS     SYS     SYS     SYS     0-55,112-167    0               N/A\n"
    "GPU4    NV18    NV18    NV18    NV18     X      NV18    NV18    NV18    SYS     SYS     SYS     SYS     PIX     NODE    NODE    NODE    56-111,168-223  1               N/A\n"
    "GPU5    NV18    NV18    NV18    NV18    NV18     X      NV18    NV18    SYS     SYS     SYS     SYS     NODE    PIX     NODE    NODE    56-111,168-223  1               N/A\n"
    "GPU6    NV18    NV18    NV18    NV18    NV18    NV18     X      NV18    SYS     SYS     SYS     SYS     NODE    NODE    PIX     NODE    56-111,168-223  1               N/A\n"
    "GPU7    NV18    NV18    NV18    NV18    NV18    NV18    NV18     X      SYS     SYS     SYS     SYS     NODE    NODE    NODE    PIX     56-111,168-223  1               N/A\n"
    "NIC0    PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS      X      NODE    NODE    NODE    SYS     SYS     SYS     SYS\n"
    "NIC1    NODE    PIX     NODE    NODE    SYS     SYS     SYS     SYS     NODE     X      NODE    NODE    SYS     SYS     SYS     SYS\n"
    "NIC2    NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS     NODE    NODE     X      NODE    SYS     SYS     SYS     SYS\n"
    "NIC3    NODE    NODE    NODE    PIX     SYS     SYS     SYS     SYS     NODE    NODE    NODE     X      SYS     SYS     SYS     SYS\n"
    "NIC4    SYS     SYS     SYS     SYS     PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS      X      NODE    NODE    NODE\n"
    "NIC5    SYS     SYS     SYS     SYS     NODE    PIX     NODE    NODE    SYS     SYS     SYS     SYS     NODE     X      NODE    NODE\n"
    "NIC6    SYS     SYS     SYS     SYS     NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS     NODE    NODE     X      NODE\n"
    "NIC7    SYS     SYS     SYS     SYS     NODE    NODE    NODE    PIX     SYS     SYS     SYS     SYS     NODE    NODE    NODE     X\n"
    "\n"
    "NIC Legend:\n"
    "\n"
    "  NIC0: mlx5_0\n  NIC1: mlx5_1\n  NIC2: mlx5_2\n  NIC3: mlx5_3\n"
    "  NIC4: mlx5_4\n  NIC5: mlx5_5\n  NIC6: mlx5_6\n  NIC7: mlx5_7\n";

// 8x L40S, PCIe only, two sockets (fixture l40s-8-pcie-dual-socket.txt).
constexpr const char* kPcie8DualSocket =
    "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
    "GPU0     X      NODE    NODE    NODE    SYS     SYS     SYS     SYS     SYS     0-89    0               N/A\n"
    "GPU1    NODE     X      NODE    NODE    SYS     SYS     SYS     SYS     SYS     0-89    0               N/A\n"
    "GPU2    NODE    NODE     X      NODE    SYS     SYS     SYS     SYS     SYS     0-89    0               N/A\n"
    "GPU3    NODE    NODE    NODE     X      SYS     SYS     SYS     SYS     SYS     0-89    0               N/A\n"
    "GPU4    SYS     SYS     SYS     SYS      X      NODE    NODE    NODE    SYS     90-179  1               N/A\n"
    "GPU5    SYS     SYS     SYS     SYS     NODE     X      NODE    NODE    SYS     90-179  1               N/A\n"
    "GPU6    SYS     SYS     SYS     SYS     NODE    NODE     X      NODE    SYS     90-179  1               N/A\n"
    "GPU7    SYS     SYS     SYS     SYS     NODE    NODE    NODE     X      SYS     90-179  1               N/A\n"
    "NIC0    SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS      X\n";

// AWS g6e.12xlarge, 4x L40S, one socket (fixture l40s-4-pcie-single-socket.txt).
constexpr const char* kPcie4SingleSocket =
    "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
    "GPU0     X      NODE    NODE    NODE    0-47    0               N/A\n"
    "GPU1    NODE     X      NODE    NODE    0-47    0               N/A\n"
    "GPU2    NODE    NODE     X      NODE    0-47    0               N/A\n"
    "GPU3    NODE    NODE    NODE     X      0-47    0               N/A\n";

// 2x RTX 5090 workstation (fixture rtx5090-2-phb.txt, tab-separated as nvidia-smi prints it).
constexpr const char* kPhb2Workstation =
    "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tPHB\t0-63\t0\t\tN/A\n"
    "GPU1\tPHB\t X \t0-63\t0\t\tN/A\n";

// 4 GPUs, NVLink all-to-all without NVSwitch, one socket: every GPU splits its links evenly over its
// 3 peers - A100 (12 links) gives NV4 per pair (HGX A100 4-GPU), H100 (18 links) NV6 (HGX H100 4-GPU).
std::string NvAllToAll4(int links) {
  std::string t = "        GPU0    GPU1    GPU2    GPU3    NUMA Affinity\n";
  for (int r = 0; r < 4; ++r) {
    t += fmt::format("GPU{}", r);
    for (int c = 0; c < 4; ++c) t += r == c ? "     X  " : fmt::format("    NV{}", links);
    t += "    0\n";
  }
  return t;
}

// HGX A100 16-GPU (Google Cloud a2-megagpu-16g): two 8-GPU baseboards whose NVSwitches are joined, so
// every pair of the 16 GPUs reaches the other through the switches with all 12 of its NVLinks (NV12).
// The host side (sockets, NUMA, NICs) is not published for the cloud machine; only the GPU block is
// given, as in generic-pcie-N.
std::string NvSwitch16A100() {
  std::string t;
  for (int c = 0; c < 16; ++c) t += fmt::format("\tGPU{}", c);
  t += "\n";
  for (int r = 0; r < 16; ++r) {
    t += fmt::format("GPU{}", r);
    for (int c = 0; c < 16; ++c) t += r == c ? "\t X " : "\tNV12";
    t += "\n";
  }
  return t;
}

// The fallback for a machine nothing is known about: every pair NODE, no NUMA. NODE is the weakest
// class that still places the GPUs in one socket: it never promises a shared PCIe switch or host
// bridge (so min-link PIX/PXB/PHB/NV requests are not sent to an unknown machine), yet it does not
// brand every pair as cross-socket, which would be as arbitrary in the other direction. All pairs equal
// also keeps the selector from inventing preferences between GPUs it knows nothing about.
std::string GenericPcie(int n) {
  std::string t;
  for (int c = 0; c < n; ++c) t += fmt::format("\tGPU{}", c);
  t += "\n";
  for (int r = 0; r < n; ++r) {
    t += fmt::format("GPU{}", r);
    for (int c = 0; c < n; ++c) t += r == c ? "\t X " : "\tNODE";
    t += "\n";
  }
  return t;
}

// DGX-1 with P100-SXM2: the same hybrid cube-mesh, but P100 has 4 NVLinks (NVLink 1, 20 GB/s per link
// per direction) and 4 peers per GPU, so every NVLink pair is NV1 - the doubled V100 edges are single.
// The model's 25 GB/s per link overstates P100 links by a quarter, uniformly.
std::string Dgx1P100() {
  std::string t = kDgx1V100;
  for (size_t at; (at = t.find("NV2")) != std::string::npos;) t.replace(at, 3, "NV1");
  return t;
}

struct Profile {
  ProfileInfo info;
  std::function<std::string()> text;
};

const std::vector<Profile>& Profiles() {
  static const std::vector<Profile> profiles = {
      {{"dgx1-v100", "DGX-1/HGX-1 V100: 8 GPUs, hybrid cube-mesh NVLink (NV1/NV2), 2 sockets, 1 NIC", 8}, [] { return std::string(kDgx1V100); }},
      {{"dgx1-p100", "DGX-1 P100: 8 GPUs, hybrid cube-mesh NVLink (all NV1), 2 sockets, 1 NIC", 8}, Dgx1P100},
      {{"hgx-a100-8", "HGX A100 8-GPU (AWS p4d.24xlarge): NVSwitch NV12, 2 sockets", 8}, [] { return std::string(kHgxA100x8); }},
      {{"dgx-a100", "DGX A100: 8 GPUs on NVSwitch NV12, 10 NICs (PXB pairs per GPU pair), NPS4 NUMA", 8},
       [] { return std::string(kDgxA100); }},
      {{"hgx-h100-8", "HGX/DGX H100 8-GPU: NVSwitch NV18, 8 NICs (one PIX per GPU), 2 sockets", 8}, [] { return std::string(kHgxNv18x8); }},
      {{"hgx-h200-8", "HGX H200 8-GPU: NVSwitch NV18, 8 NICs (one PIX per GPU), 2 sockets", 8}, [] { return std::string(kHgxNv18x8); }},
      {{"hgx-b200-8", "HGX B200 8-GPU: NVSwitch NV18, 8 NICs (one PIX per GPU), 2 sockets", 8}, [] { return std::string(kHgxNv18x8); }},
      {{"hgx-a100-16", "HGX A100 16-GPU (GCP a2-megagpu-16g): NVSwitch NV12 between all 16, host side unknown", 16},
       NvSwitch16A100},
      {{"hgx-a100-4", "HGX A100 4-GPU: NVLink all-to-all NV4, no NVSwitch, 1 socket", 4}, [] { return NvAllToAll4(4); }},
      {{"hgx-h100-4", "HGX H100 4-GPU: NVLink all-to-all NV6, no NVSwitch, 1 socket", 4}, [] { return NvAllToAll4(6); }},
      {{"pcie-8-dual-socket", "8 PCIe GPUs (e.g. L40S), 2 sockets: NODE within a socket, SYS across, 1 NIC", 8}, [] { return std::string(kPcie8DualSocket); }},
      {{"pcie-4-single-socket", "4 PCIe GPUs (e.g. AWS g6e.12xlarge L40S), 1 socket, all NODE", 4}, [] { return std::string(kPcie4SingleSocket); }},
      {{"phb-2-workstation", "2 PCIe GPUs through one host bridge (PHB), e.g. a 2x RTX 5090 workstation", 2}, [] { return std::string(kPhb2Workstation); }},
      {{"generic-pcie-N", "Unknown machine with N GPUs (1..64): every pair NODE, no NVLink, no NUMA", 0}, nullptr},
  };
  return profiles;
}

}  // namespace

std::vector<ProfileInfo> ListProfiles() {
  std::vector<ProfileInfo> out;
  for (const Profile& p : Profiles()) out.push_back(p.info);
  return out;
}

Result<TopoMatrix> ProfileMatrix(std::string_view name) {
  constexpr std::string_view kGeneric = "generic-pcie-";
  if (name.substr(0, std::min(name.size(), kGeneric.size())) == kGeneric) {
    std::string_view digits = name.substr(kGeneric.size());
    int n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && n >= 1 && n <= GpuSet::kMaxGpus) {
      return ParseTopoMatrix(GenericPcie(n));
    }
  }
  for (const Profile& p : Profiles()) {
    if (p.text && p.info.name == name) return ParseTopoMatrix(p.text());
  }
  std::string names;
  for (const Profile& p : Profiles()) names += (names.empty() ? "" : ", ") + p.info.name;
  return Error{fmt::format("unknown profile '{}'; known profiles: {} (N = 1..{})", name, names, GpuSet::kMaxGpus)};
}

std::string ProfileForProduct(std::string_view product, int gpu_count) {
  // GPU Feature Discovery writes the product name with '-' for spaces ("NVIDIA-A100-SXM4-80GB",
  // "Tesla-V100-SXM2-16GB", "NVIDIA-H100-80GB-HBM3"); compare its dash-separated words upper-cased,
  // so that e.g. GH200 is not taken for H200.
  std::vector<std::string> words(1);
  for (char c : product) {
    if (c == '-' || c == ' ' || c == '_') {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  auto has = [&](std::string_view w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  auto has_prefix = [&](std::string_view p) {
    return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return w.rfind(p, 0) == 0; });
  };
  const bool sxm = has_prefix("SXM") || has_prefix("HBM");
  const bool pcie_card = has("PCIE") || has("NVL");
  const int n = gpu_count;
  if (has("V100") && has_prefix("SXM") && n == 8) return "dgx1-v100";
  if (has("P100") && has_prefix("SXM") && n == 8) return "dgx1-p100";
  if (has("A100") && has_prefix("SXM") && n == 8) return "hgx-a100-8";
  if (has("A100") && has_prefix("SXM") && n == 4) return "hgx-a100-4";
  if (has("A100") && has_prefix("SXM") && n == 16) return "hgx-a100-16";
  if (has("H100") && sxm && !pcie_card && n == 8) return "hgx-h100-8";
  if (has("H100") && sxm && !pcie_card && n == 4) return "hgx-h100-4";
  if (has("H200") && !pcie_card && n == 8) return "hgx-h200-8";
  if (has("B200") && !pcie_card && n == 8) return "hgx-b200-8";
  if ((has("L40S") || has("L40")) && n == 8) return "pcie-8-dual-socket";
  if ((has("L40S") || has("L40")) && n == 4) return "pcie-4-single-socket";
  if ((has("GEFORCE") || has("RTX")) && n == 2) return "phb-2-workstation";
  return fmt::format("generic-pcie-{}", std::clamp(n, 1, GpuSet::kMaxGpus));
}

}  // namespace topofit
