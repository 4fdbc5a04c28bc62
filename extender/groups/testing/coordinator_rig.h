#pragma once
// A GroupCoordinator on a small labelled cluster (small_clusters.h: blocks of 8-GPU nodes), with the
// steps the verbs take: a member's filter (the pod seen by the model first, as kube-scheduler's filter
// is), and filter-then-bind with the watch reporting the bound pod. For the coordinator's tests.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

#include "extender/groups/group_coordinator.h"
#include "extender/groups/testing/small_clusters.h"

namespace topofit::groups::testing {

// A member pod of group `group` (size members of 8 GPUs, required in a block), pending or bound.
inline k8s::PodObject BlockMember(const std::string& uid, const std::string& group, int size,
                                  const std::string& node = "", const std::string& ids = "") {
  return cluster::testing::MakePod(uid, 8, node, ids, 0,
                                   {{"topofit.io/group", group}, {"topofit.io/group-size", std::to_string(size)},
                                    {"topofit.io/group-level", "block"}, {"topofit.io/group-policy", "required"}});
}

struct CoordinatorRig {
  cluster::FakeClock clock;
  cluster::ClusterModel model{cluster::ModelOptions{.clock = &clock}};
  placement::Pipeline pipeline{&model};
  GroupLookup lookup{SmallLevels()};
  GroupCoordinator groups{pipeline, lookup};
  explicit CoordinatorRig(int blocks = 2, int per_block = 2) {
    AddNodes(model, Blocks(blocks, per_block), "hgx-h100-8", 8);
  }
  GroupVerdict Filter(const k8s::PodObject& pod,
                      std::optional<std::span<const std::string_view>> candidates = std::nullopt) {
    model.ApplyPod(pod);
    return groups.Filter(cluster::MakePodRequest(pod), candidates);
  }
  // Filter then bind, as the verbs do, then the watch reporting the bound pod with its gpu-ids.
  GroupVerdict FilterAndBind(const k8s::PodObject& pod) {
    GroupVerdict v = Filter(pod);
    if (v.node.empty()) return v;
    auto gpus = groups.Bind(cluster::MakePodRequest(pod), v.node);
    REQUIRE(gpus.ok());
    REQUIRE(model.Confirm(pod.meta.uid).ok());
    k8s::PodObject bound = pod;
    bound.node_name = v.node;
    bound.meta.annotations["topofit.io/gpu-ids"] = gpus->ToString();
    model.ApplyPod(bound);
    return v;
  }
};

}  // namespace topofit::groups::testing
