#pragma once
// TieBreak: how topofit orders the nodes of its best band - the nodes whose weighted score sum is the
// best (within 1e-9), which FragmentationGradient often leaves large: every node on which the pod
// fragments nothing ties. With relative levels only the nodes the rule ranks first get 10; the rest of
// the band gets the level just below (pipeline_config.h), so kube-scheduler's in-tree scores
// (LeastAllocated, which spreads, or MostAllocated, which packs) choose only among nodes the rule
// cannot tell apart, and topofit places alike under either profile.
//
//   none           no rule: every node of the band gets 10 and the in-tree scores choose.
//   fit-then-pack  lexicographic, each after placing the pod on the node:
//                    1. fewer free GPUs left (best fit on GPUs: whole nodes and large free sets stay
//                       for the pods that need them; a pod without GPUs goes first where no GPU is
//                       free: a node without GPUs, or one whose GPUs are all taken);
//                    2. higher share of CPU and memory allocated, (cpu_used / cpu_alloc +
//                       mem_used / mem_alloc) / 2 over the dimensions the node declares (packing, as
//                       NodeResourcesFit MostAllocated: CPU and memory free together stay together).
//   pack           one key: the mean of the GPU, CPU and memory shares allocated after placing the
//                  pod, higher first (MostAllocated over cpu, memory and nvidia.com/gpu).
// Exact ties: equal free GPU counts and shares within 1e-9. Reads what a score plugin reads (plugin.h:
// the GPU state, allocatable and used CPU and memory), never the node's name. No constant to tune.
// Before any rule's keys, and under every rule (none included), comes the band loss a BandLoss plugin
// gives (band_loss.h; 0 without one): less first, within 1e-9.

#include <optional>
#include <string_view>

#include "extender/placement/plugin.h"

namespace topofit::placement {

enum class TieBreak : uint8_t { kNone, kFitThenPack, kPack };

std::string_view ToString(TieBreak rule);              // "none", "fit-then-pack", "pack"
std::optional<TieBreak> ParseTieBreak(std::string_view name);

// A node's position under a rule; compare with Better / Tied.
struct TieKey {
  double band_loss = 0;     // BandLoss::Losses (band_loss.h), first under every rule.
  int free_gpus_after = 0;  // fit-then-pack's first key (0 under pack).
  double share_after = 0;   // The allocated share after placing the pod, in [0, 1] (may pass 1 when over-committed).

  // The rule's order: a before b.
  // The band loss first (lower; within kTie, equal), then fewer free GPUs after, then the larger
  // share: every comparison made, joined without branches, so that a scan of a band whose losses
  // differ node by node mispredicts none (the two loss tests cannot both hold).
  static bool Better(const TieKey& a, const TieKey& b) {
    const bool lower = a.band_loss < b.band_loss - kTie, higher = b.band_loss < a.band_loss - kTie;
    const bool fewer = a.free_gpus_after < b.free_gpus_after, same = a.free_gpus_after == b.free_gpus_after;
    return lower | ((!higher) & (fewer | (same & (a.share_after > b.share_after + kTie))));
  }
  // !Better(a, b) && !Better(b, a), the same comparisons joined without branches: a band of
  // thousands of nodes whose losses differ by block mispredicts none of them.
  static bool Tied(const TieKey& a, const TieKey& b) {
    return !(a.band_loss < b.band_loss - kTie) & !(b.band_loss < a.band_loss - kTie) &
           (a.free_gpus_after == b.free_gpus_after) & !(a.share_after > b.share_after + kTie) &
           !(b.share_after > a.share_after + kTie);
  }
  static constexpr double kTie = 1e-9;
};

// The key of placing `pod` (pod.gpus GPUs, its CPU and memory) on `node` under `rule` (kNone: all equal).
TieKey TieKeyOf(TieBreak rule, const NodeView& node, const cluster::PodRequest& pod);

}  // namespace topofit::placement
