#pragma once
// The embedded demo cluster: what `topofit serve` runs on when given no cluster source, so that the
// first README command shows a working extender. Two DGX-1 V100 nodes (profile annotation), one
// HGX A100 node (GPU Feature Discovery labels), an 8-GPU dual-socket PCIe node (profile) and a
// 4-GPU PCIe node whose annotation is raw `nvidia-smi topo -m` text, with four bound pods.
// Source: demo_cluster.yaml, compiled in; loaded through the ordinary snapshot loader.

#include <string_view>

#include "extender/k8s/snapshot.h"

namespace topofit::k8s {

std::string_view DemoClusterYaml();
Result<Snapshot> LoadDemoCluster();

}  // namespace topofit::k8s
