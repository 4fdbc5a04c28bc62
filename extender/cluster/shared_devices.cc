#include "extender/cluster/shared_devices.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "base/strings.h"
#include "extender/k8s/objects.h"

namespace topofit::cluster {

std::string_view ToString(SharingMode mode) {
  switch (mode) {
    case SharingMode::kNone: return "none";
    case SharingMode::kTimeSlicing: return "time-slicing";
    case SharingMode::kMps: return "mps";
    case SharingMode::kMigSingle: return "mig-single";
  }
  return "?";
}

GpuSet SharedDevices::DevicesOf(int gpu) const {
  if (!shared()) return GpuSet::FirstN(gpu + 1) - GpuSet::FirstN(gpu);
  return GpuSet(GpuSet::FirstN(per_gpu).mask() << (gpu * per_gpu));
}

GpuSet SharedDevices::DevicesOfGpus(GpuSet gpus) const {
  GpuSet out;
  for (int g : gpus.Indices()) out = out | DevicesOf(g);
  return out;
}

GpuSet SharedDevices::GpusOf(GpuSet devices) const {
  GpuSet out;
  for (int d : devices.Indices()) out.Add(GpuOf(d));
  return out;
}

GpuSet SharedDevices::WholeFree(GpuSet usable, GpuSet free) const {
  GpuSet out;
  for (int g : GpusOf(usable).Indices()) {
    const GpuSet mine = DevicesOf(g) & usable;
    if (mine.IsSubsetOf(free)) out.Add(g);
  }
  return out;
}

GpuSet SharedDevices::Offerable(GpuSet free, int count, bool packed) const {
  if (!shared() || count <= 0 || free.size() < count || (packed && !mig())) return free;
  GpuSet out;
  if (!mig()) {
    for (int g : GpusOf(free).Indices()) out.Add((DevicesOf(g) & free).Lowest());
    return out;
  }
  std::vector<std::pair<int, int>> fullest;  // (free devices, GPU): the fewest free first.
  for (int g : GpusOf(free).Indices()) fullest.emplace_back((DevicesOf(g) & free).size(), g);
  std::sort(fullest.begin(), fullest.end());
  for (const auto& [n, g] : fullest) {
    for (int d : (DevicesOf(g) & free).Indices()) {
      if (out.size() == count) return out;
      out.Add(d);
    }
  }
  return out;
}

std::string SharedDevices::DeviceName(int device) const {
  if (!shared()) return "";
  if (mig()) return fmt::format("MIG {} #{}", mig_profile, SlotOf(device));
  return fmt::format("replica {}", SlotOf(device));
}

std::string_view StripSharingSuffix(std::string_view product) {
  if (product.ends_with("-SHARED")) return product.substr(0, product.size() - 7);
  if (auto mig = product.rfind("-MIG-"); mig != std::string_view::npos) return product.substr(0, mig);
  return product;
}

namespace {

std::optional<int> PositiveInt(std::string_view v) {
  v = Trim(v);
  int parsed = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
  if (ec != std::errc() || end != v.data() + v.size() || parsed <= 0) return std::nullopt;
  return parsed;
}

std::string Label(const std::map<std::string, std::string>& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : std::string(Trim(it->second));
}

// "1g.10gb" (also "1g.10gb+me", "1g.10gb.me"): its compute slices, memory and devices per GPU.
bool ParseMigProfile(std::string_view product, SharedDevices& s) {
  auto at = product.rfind("-MIG-");
  if (at == std::string_view::npos) return false;
  std::string_view profile = product.substr(at + 5);
  s.mig_profile = std::string(profile);
  auto g = profile.find('g');
  auto dot = profile.find('.');
  if (g == std::string_view::npos || dot != g + 1) return false;
  auto slices = PositiveInt(profile.substr(0, g));
  auto gb = profile.find("gb", dot);
  auto mem = gb == std::string_view::npos ? std::nullopt : PositiveInt(profile.substr(dot + 1, gb - dot - 1));
  if (!slices || !mem) return false;
  s.mig_compute_slices = *slices;
  s.mig_memory_gb = *mem;
  s.gpu_compute_slices = product.find("A30") != std::string_view::npos ? 4 : 7;
  const bool media = profile.find("me", gb + 2) != std::string_view::npos;  // One media-extension device per GPU.
  s.per_gpu = media ? 1 : std::max(1, s.gpu_compute_slices / s.mig_compute_slices);
  return true;
}

// The physical GPUs for `allocatable` devices of `per_gpu` each (rounded up), capped so that the
// devices fit 64.
int GpusFor(SharedDevices& s, int allocatable, std::vector<std::string>& warnings) {
  int gpus = (allocatable + s.per_gpu - 1) / s.per_gpu;
  if (gpus * s.per_gpu > GpuSet::kMaxGpus) {
    int fit = GpuSet::kMaxGpus / s.per_gpu;
    warnings.push_back(fmt::format("{} GPUs of {} devices each are {} devices; topofit models at most {}: using {} GPUs",
                                   gpus, s.per_gpu, gpus * s.per_gpu, GpuSet::kMaxGpus, fit));
    gpus = fit;
  }
  return gpus;
}

std::optional<SharedDevices> ReadMig(const std::map<std::string, std::string>& labels, int allocatable,
                                     std::vector<std::string>& warnings) {
  const std::string product = Label(labels, k8s::kGfdProductLabel);
  SharedDevices s;
  s.mode = SharingMode::kMigSingle;
  if (!ParseMigProfile(product, s)) {
    warnings.push_back(fmt::format("{}=single but {} '{}' names no MIG profile '<g>g.<mem>gb'; devices taken as GPUs",
                                   k8s::kGfdMigStrategyLabel, k8s::kGfdProductLabel, product));
    return std::nullopt;
  }
  if (allocatable % s.per_gpu != 0) {
    warnings.push_back(fmt::format("{} MIG {} devices are not whole GPUs of {}; the last GPU is taken as partly hidden",
                                   allocatable, s.mig_profile, s.per_gpu));
  }
  s.gpus = GpusFor(s, allocatable, warnings);
  return s;
}

std::optional<SharedDevices> ReadReplicas(const std::map<std::string, std::string>& labels, std::string_view strategy,
                                          int allocatable, std::vector<std::string>& warnings) {
  auto replicas = PositiveInt(Label(labels, k8s::kGfdReplicasLabel));
  if (!replicas) {
    warnings.push_back(fmt::format("{}={} without a replica count in {}; devices taken as GPUs",
                                   k8s::kGfdSharingStrategyLabel, strategy, k8s::kGfdReplicasLabel));
    return std::nullopt;
  }
  if (*replicas == 1) return std::nullopt;
  SharedDevices s;
  s.mode = strategy == "mps" ? SharingMode::kMps : SharingMode::kTimeSlicing;
  s.per_gpu = *replicas;
  auto count = PositiveInt(Label(labels, k8s::kGfdCountLabel));
  if (count && *count * s.per_gpu != allocatable) {
    warnings.push_back(fmt::format("{} GPUs of {} replicas are {} devices but the node has {} allocatable",
                                   *count, s.per_gpu, *count * s.per_gpu, allocatable));
  }
  s.gpus = GpusFor(s, count ? std::max(*count * s.per_gpu, allocatable) : allocatable, warnings);
  return s;
}

}  // namespace

std::optional<SharedDevices> ReadSharing(const std::map<std::string, std::string>& labels, int allocatable,
                                         std::vector<std::string>& warnings) {
  if (allocatable <= 0) return std::nullopt;
  const std::string product = Label(labels, k8s::kGfdProductLabel);
  if (AsciiLower(Label(labels, k8s::kGfdMigStrategyLabel)) == "single" &&
      product.find("-MIG-") != std::string::npos) {
    return ReadMig(labels, allocatable, warnings);
  }
  const std::string strategy = AsciiLower(Label(labels, k8s::kGfdSharingStrategyLabel));
  if (strategy == "time-slicing" || strategy == "mps") return ReadReplicas(labels, strategy, allocatable, warnings);
  return std::nullopt;
}

namespace {

// What two MIG devices (or a MIG device and anything) talk over: the host.
Link HostLink(const TopoMatrix& m, int a, int b) {
  Link l = a == b ? Link{LinkClass::Node, 0} : m.gpu_links[a][b];
  if (l.cls != LinkClass::Nv && a != b) return l;
  const auto& numa = m.numa_affinity;
  bool apart = a < int(numa.size()) && b < int(numa.size()) && numa[a] && numa[b] && *numa[a] != *numa[b];
  return Link{apart ? LinkClass::Sys : LinkClass::Node, 0};
}

// Two replicas of GPU g: its best link to another GPU, PIX at least.
Link SameGpuLink(const TopoMatrix& m, int g) {
  Link best{LinkClass::Pix, 0};
  for (int o = 0; o < m.gpu_count(); ++o)
    if (o != g && best < m.gpu_links[g][o]) best = m.gpu_links[g][o];
  return best;
}

template <typename T>
void CopyPerGpu(const std::vector<T>& from, std::vector<T>& to, const SharedDevices& s, int n) {
  if (from.empty()) return;
  to.resize(n);
  for (int d = 0; d < n; ++d)
    if (s.GpuOf(d) < int(from.size())) to[d] = from[s.GpuOf(d)];
}

}  // namespace

Result<TopoMatrix> DeviceMatrix(const TopoMatrix& physical, const SharedDevices& s) {
  const int n = s.devices();
  if (n > GpuSet::kMaxGpus) return Error{fmt::format("{} devices; topofit models at most {}", n, GpuSet::kMaxGpus)};
  if (s.gpus > physical.gpu_count()) {
    return Error{fmt::format("{} GPUs shared but the topology has {}", s.gpus, physical.gpu_count())};
  }
  TopoMatrix m;
  m.nic_names = physical.nic_names;
  m.nic_links = physical.nic_links;
  m.nic_legend = physical.nic_legend;
  m.warnings = physical.warnings;
  m.gpu_links.assign(n, std::vector<Link>(n));
  for (int a = 0; a < n; ++a) {
    m.gpu_names.push_back(fmt::format("GPU{}", a));
    const int ga = s.GpuOf(a);
    for (int b = 0; b < n; ++b) {
      const int gb = s.GpuOf(b);
      Link& l = m.gpu_links[a][b];
      if (a == b) l = Link{LinkClass::Self, 0};
      else if (s.mig()) l = HostLink(physical, ga, gb);
      else l = ga == gb ? SameGpuLink(physical, ga) : physical.gpu_links[ga][gb];
    }
  }
  CopyPerGpu(physical.gpu_nic, m.gpu_nic, s, n);
  CopyPerGpu(physical.cpu_affinity, m.cpu_affinity, s, n);
  CopyPerGpu(physical.numa_affinity, m.numa_affinity, s, n);
  CopyPerGpu(physical.numa_affinity_list, m.numa_affinity_list, s, n);
  CopyPerGpu(physical.gpu_numa_id, m.gpu_numa_id, s, n);
  return m;
}

}  // namespace topofit::cluster
