#include "bench/groups_workload.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "extender/k8s/objects.h"

namespace topofit::bench {

namespace {
constexpr const char* kSpineKey = "network.topology.nvidia.com/spine";
constexpr const char* kBlockKey = "network.topology.nvidia.com/block";
constexpr const char* kCliqueKey = "nvidia.com/gpu.clique";
constexpr const char* kHostnameKey = "kubernetes.io/hostname";
}  // namespace

double SizeMix::MeanGpus() const {
  double w = 0, s = 0;
  for (const Entry& e : entries) {
    w += e.weight;
    s += e.weight * e.gpus;
  }
  return w > 0 ? s / w : 0;
}

int SizeMix::MedianGpus() const {
  double w = 0;
  for (const Entry& e : entries) w += e.weight;
  double acc = 0;
  for (const Entry& e : entries) {
    acc += e.weight;
    if (acc >= w / 2) return e.gpus;
  }
  return entries.empty() ? 0 : entries.back().gpus;
}

Result<SizeMix> GroupSizeMix(const std::string& name) {
  SizeMix mix;
  mix.name = name;
  if (name == "helios-fit") {
    for (int i = 0; i <= 6; ++i) mix.entries.push_back({1 << i, std::ldexp(1.0, -i)});
  } else if (name == "multi-node") {
    for (int g : {8, 16, 32, 64, 128}) mix.entries.push_back({g, 1.0});
  } else if (name == "openb+multi-node") {
    // openb_pod_list_default.csv's pods asking 1, 2, 4 and 8 GPUs (docs/groups.md), scaled so that the
    // pods and the groups each ask half of the GPUs: pods weigh W in all, groups G, with W x (pods' mean
    // GPUs) = G x (groups' mean GPUs).
    const std::pair<int, double> pods[] = {{1, 6989}, {2, 16}, {4, 15}, {8, 44}};
    double count = 0, gpus = 0;
    for (const auto& [g, n] : pods) {
      count += n;
      gpus += g * n;
    }
    const double group_mean = (8 + 16 + 32 + 64 + 128) / 5.0;
    for (const auto& [g, n] : pods) mix.entries.push_back({g, n / count, true});
    const double groups = (gpus / count) / group_mean;  // G, with W = 1.
    for (int g : {8, 16, 32, 64, 128}) mix.entries.push_back({g, groups / 5});
  } else {
    return Error{fmt::format("unknown size mix '{}': expected helios-fit, multi-node or openb+multi-node", name)};
  }
  return mix;
}

int ClusterShape::nodes() const {
  int n = top_domains;
  for (int f : fanout) n *= f;
  return n;
}

int ClusterShape::DomainGpus(int level) const {
  int n = gpus_per_node;
  for (size_t i = level; i < fanout.size(); ++i) n *= fanout[i];
  return n;
}

Result<ClusterShape> GroupClusterShape(const std::string& name) {
  ClusterShape s;
  s.name = name;
  if (name == "h100-spine") {
    s.profile = "hgx-h100-8";
    s.gpus_per_node = 8;
    s.level_keys = {kSpineKey, kBlockKey};
    s.fanout = {4, 32};
    s.top_domains = 2;
    s.nvlink_gbps = 450;  // NVLink 4: 900 GB/s a GPU, both ways together (H100 SXM datasheet).
    s.nic_gbps = 50;      // One 400 Gb/s ConnectX-7 a GPU (HGX H100 / DGX H100 compute fabric).
  } else if (name == "gb200-nvl72") {
    s.profile = "hgx-h100-4";
    s.gpus_per_node = 4;
    s.level_keys = {kBlockKey, kCliqueKey};
    s.fanout = {4, 18};
    s.top_domains = 2;
    s.nvlink_gbps = 900;  // NVLink 5: 1.8 TB/s a GPU, both ways together (GB200 NVL72 datasheet).
    s.nic_gbps = 50;      // One 400 Gb/s ConnectX-7 a GPU (GB200 NVL72 reference design).
    s.nvlink_level = 1;   // The clique: one NVL72 NVLink domain.
  } else {
    return Error{fmt::format("unknown cluster shape '{}': expected h100-spine or gb200-nvl72", name)};
  }
  return s;
}

void AddShapeNodes(const ClusterShape& shape, cluster::ClusterModel& model) {
  const int n = shape.nodes();
  for (int i = 0; i < n; ++i) {
    std::map<std::string, std::string> labels;
    // Nodes are numbered depth-first; a label value is the path of indices down to its level ("d1-3").
    int per = n;
    std::string path;
    for (size_t l = 0; l < shape.level_keys.size(); ++l) {
      const int children = l == 0 ? shape.top_domains : shape.fanout[l - 1];
      per /= children;
      path += (l ? "-" : "") + std::to_string((i / per) % children);
      labels[shape.level_keys[l]] = "d" + path;
    }
    const std::string name = fmt::format("node-{:04d}", i);
    labels[kHostnameKey] = name;
    k8s::NodeObject node;
    node.meta.name = name;
    node.meta.uid = "node-" + name;
    node.meta.labels = std::move(labels);
    node.meta.annotations[k8s::kTopologyAnnotation] = shape.profile;
    node.allocatable_gpus = node.capacity_gpus = shape.gpus_per_node;
    model.ApplyNode(node);
  }
}

std::vector<int> ShapeLevels(const ClusterShape& shape, const groups::DomainLevels& levels) {
  std::vector<int> out;
  for (const std::string& key : shape.level_keys) out.push_back(levels.Find(key));
  out.push_back(levels.Find(kHostnameKey));
  return out;
}

groups::GroupSpec GroupForJob(const ClusterShape& shape, const groups::DomainLevels& levels, int gpus, int index) {
  groups::GroupSpec spec;
  spec.namespace_ = "bench";
  spec.name = fmt::format("job-{}", index);
  spec.gpus = std::min(gpus, shape.gpus_per_node);
  spec.size = std::max(1, gpus / shape.gpus_per_node);
  spec.min_count = spec.size;
  const std::vector<int> shape_levels = ShapeLevels(shape, levels);
  spec.policy = groups::LevelPolicy::kPreferred;
  spec.level = shape_levels.front();
  // The narrowest level whose domains hold the job: the node, then upwards.
  for (int l = static_cast<int>(shape.fanout.size()); l >= 0; --l) {
    if (shape.DomainGpus(l) >= gpus) {
      spec.level = shape_levels[l];
      spec.policy = groups::LevelPolicy::kRequired;
      break;
    }
  }
  return spec;
}

std::vector<GroupArrival> GenerateGroups(const SizeMix& mix, const ClusterShape& shape,
                                         const groups::DomainLevels& levels, int count, double mean_lifetime,
                                         uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (const SizeMix::Entry& e : mix.entries) weights.push_back(e.weight);
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  std::exponential_distribution<double> life(1.0 / std::max(1.0, mean_lifetime));
  std::vector<GroupArrival> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    const SizeMix::Entry& e = mix.entries[pick(rng)];
    const int gpus = e.gpus;
    GroupArrival a;
    a.spec = GroupForJob(shape, levels, gpus, i);
    a.single = e.single;
    if (a.single) {  // One pod on one node: the host level, as kube-scheduler places any pod.
      a.spec.name = fmt::format("pod-{}", i);
      a.spec.size = a.spec.min_count = 1;
      a.spec.gpus = gpus;
      a.spec.level = ShapeLevels(shape, levels).back();
      a.spec.policy = groups::LevelPolicy::kPreferred;
    }
    a.total_gpus = gpus;
    a.lifetime = std::max(1, static_cast<int>(std::ceil(life(rng))));
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace topofit::bench
