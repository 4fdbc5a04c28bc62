#pragma once
// Builders shared by the cluster and placement tests: k8s objects as the decoders would produce them,
// and the PodRequest that placement reads from them.

#include <map>
#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/pod_intent.h"
#include "extender/k8s/objects.h"

namespace topofit::cluster::testing {

// A gang PodGroup of `min_count` members.
inline k8s::PodGroupObject MakePodGroup(k8s::PodGroupObject::Api api, const std::string& ns, const std::string& name,
                                        int32_t min_count) {
  k8s::PodGroupObject g;
  g.api = api;
  g.namespace_ = ns;
  g.name = name;
  g.min_count = min_count;
  return g;
}

inline k8s::NodeObject MakeNode(const std::string& name, int gpus, const std::string& topology = "",
                                std::map<std::string, std::string> labels = {}) {
  k8s::NodeObject n;
  n.meta.name = name;
  n.meta.uid = "node-" + name;
  n.allocatable_gpus = gpus;
  n.capacity_gpus = gpus;
  n.meta.labels = std::move(labels);
  if (!topology.empty()) n.meta.annotations[k8s::kTopologyAnnotation] = topology;
  return n;
}

constexpr int64_t kGiB = int64_t(1) << 30;

// A node with CPU and memory as well: `cores` cores and `mem_gib` GiB allocatable.
inline k8s::NodeObject MakeNodeWithResources(const std::string& name, int gpus, const std::string& topology,
                                             int64_t cores, int64_t mem_gib) {
  k8s::NodeObject n = MakeNode(name, gpus, topology);
  n.allocatable_cpu_milli = cores * 1000;
  n.allocatable_memory_bytes = mem_gib * kGiB;
  return n;
}

// Applies MakeNodeWithResources, labelled with GPU product `product` (nvidia.com/gpu.product) unless "".
inline void AddNode(ClusterModel& model, const std::string& name, int gpus, const std::string& topology,
                    int64_t cores, int64_t mem_gib, const std::string& product = "") {
  k8s::NodeObject n = MakeNodeWithResources(name, gpus, topology, cores, mem_gib);
  if (!product.empty()) n.meta.labels[k8s::kGfdProductLabel] = product;
  model.ApplyNode(n);
}

inline k8s::PodObject MakePod(const std::string& uid, int gpus, const std::string& node = "",
                              const std::string& gpu_ids = "", int32_t priority = 0,
                              std::map<std::string, std::string> annotations = {}) {
  k8s::PodObject p;
  p.meta.uid = uid;
  p.meta.name = "pod-" + uid;
  p.meta.namespace_ = "default";
  p.meta.annotations = std::move(annotations);
  if (!gpu_ids.empty()) p.meta.annotations[k8s::kGpuIdsAnnotation] = gpu_ids;
  p.gpus = gpus;
  p.node_name = node;
  p.phase = node.empty() ? "Pending" : "Running";
  p.priority = priority;
  return p;
}

inline PodRequest Request(const std::string& uid, int gpus, std::map<std::string, std::string> annotations = {},
                          int32_t priority = 0) {
  return MakePodRequest(MakePod(uid, gpus, "", "", priority, std::move(annotations)));
}

inline std::map<std::string, std::string> Required(const std::string& min_link = "") {
  std::map<std::string, std::string> a{{k8s::kTopologyPolicyAnnotation, "required"}};
  if (!min_link.empty()) a[k8s::kMinLinkAnnotation] = min_link;
  return a;
}

}  // namespace topofit::cluster::testing
