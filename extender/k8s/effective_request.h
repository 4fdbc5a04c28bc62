#pragma once
// The effective request of a pod for one resource, computed as upstream kube-scheduler does
// (k8s.io/component-helpers resource.PodRequests):
//   sum over regular containers, plus every restartable ("sidecar", restartPolicy Always) init
//   container, and at least the largest regular init container - where a regular init container
//   runs beside the sidecars started before it, so its peak is its own request plus theirs.

#include <cstdint>
#include <string>
#include <vector>

namespace topofit::k8s {

struct ContainerRequest {
  int64_t gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  bool restartable = false;  // Init container with restartPolicy: Always.
  std::string name;
  std::string dra_class;        // The first deviceclass.resource.kubernetes.io/<class> it asks; "" if none.
  int64_t dra_class_count = 0;  // How many of it.
};

struct EffectiveRequest {
  int64_t gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
};

EffectiveRequest ComputeEffectiveRequest(const std::vector<ContainerRequest>& containers,
                                         const std::vector<ContainerRequest>& init_containers);

}  // namespace topofit::k8s
