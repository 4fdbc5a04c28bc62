#pragma once
// The topofit policy: placement through the very pipeline that answers kube-scheduler in
// `topofit serve` (extender/cluster: ClusterModel, extender/placement: Pipeline), in-process - nothing of topofit's
// policy is re-implemented here.
//
// Per pod, as kube-scheduler with topofit configured as its extender (manifests/base):
//   1. kube-scheduler's own filters (the driver's SimCluster::Fits) give the feasible nodes;
//   2. Pipeline::Filter on them (the extender's filter verb) keeps those topofit accepts;
//   3. Pipeline::Prioritize (the prioritize verb) scores them 0..10; the node total is
//      kube-scheduler's in-tree scores (LeastAllocated, or MostAllocated with --in-tree most, +
//      BalancedAllocation) + score * weight
//      * 10, as kube-scheduler adds extender scores; ties go to a seeded random pick (selectHost);
//   4. Pipeline::ReserveBest + Confirm (the bind verb) choose and hold the exact GPU set.
// Departures delete the pod from the model, as the watch would. The model sees each node with its
// topology named in the topofit.io/gpu-topology annotation (profile name or topo -m text), exactly
// as a node agent or an operator would publish it.
// Pods asking for no GPU skip steps 2-4 (kube-scheduler does not send them to a managedResources
// extender) and get the in-tree scores only; once bound they enter the model as a bound pod from the
// watch would, so their CPU and memory count in the resource-aware score (Stranding).

#include <memory>

#include "bench/policy.h"
#include "extender/placement/pipeline_config.h"

namespace topofit::bench {

std::unique_ptr<Policy> MakeTopofitPolicy(const PolicyOptions& options);

// kube-scheduler's default in-tree node scores (what the extender score is added to).
int64_t InTreeDefaultScore(const SimNode& node, const PodSpec& pod);
// The same with NodeResourcesFit MostAllocated (PolicyOptions::in_tree "most").
int64_t InTreeScore(const SimNode& node, const PodSpec& pod, bool most_allocated);

// What an extender's 0-10 score adds to a node's total in kube-scheduler: score x weight x
// (MaxNodeScore 100 / MaxExtenderPriority 10).
inline int64_t ExtenderTotal(int score, int weight) { return int64_t(score) * weight * 10; }

}  // namespace topofit::bench
