#pragma once
// Test nodes whose GPUs are shared, labelled as GPU Feature Discovery labels them
// (docs/shared-gpus.md): an 8-GPU A100 node time-sliced 4 ways (32 devices) and one split into
// 1g.10gb MIG devices under the single strategy (56 devices). Header-only, tests only.

#include <string>

#include "extender/cluster/testing/builders.h"

namespace topofit::cluster::testing {

inline k8s::NodeObject TimeSlicedA100Node(const std::string& name, int allocatable = 32) {
  return MakeNode(name, allocatable, "",
                  {{k8s::kGfdProductLabel, "NVIDIA-A100-SXM4-80GB-SHARED"},
                   {k8s::kGfdCountLabel, "8"},
                   {k8s::kGfdReplicasLabel, "4"},
                   {k8s::kGfdSharingStrategyLabel, "time-slicing"}});
}

inline k8s::NodeObject MigA100Node(const std::string& name) {
  return MakeNode(name, 56, "",
                  {{k8s::kGfdProductLabel, "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"},
                   {k8s::kGfdCountLabel, "56"},
                   {k8s::kGfdReplicasLabel, "1"},
                   {k8s::kGfdMigStrategyLabel, "single"}});
}

}  // namespace topofit::cluster::testing
