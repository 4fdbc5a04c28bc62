#pragma once
// The 5,000-node clusters the latency benches share: EC2-style node names, Node objects as kubelet
// reports them, and the pods that make a cluster busy. extender_loadgen serves them over HTTP;
// pipeline_perftest runs the model on them alone; raw_json_perftest decodes a full-node body of them.

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "extender/k8s/objects.h"

namespace topofit::k8s::testing {

// As EC2 names nodes (27 bytes): 5,000 of them make a ~150 KB filter body, as a large cluster sends; they
// are too long for std::string's inline buffer, as real names are.
inline std::string Ec2NodeName(int i) { return fmt::format("ip-10-0-{}-{}.ec2.internal", 100 + i / 256, 100 + i % 256); }

// The built-in profile of node i: three kinds of 8-GPU nodes in turn.
inline const char* Profile(int i) { return i % 3 == 0 ? "dgx1-v100" : i % 3 == 1 ? "hgx-a100-8" : "pcie-8-dual-socket"; }

// A Node as kubelet reports it: labels, annotations, conditions, addresses, images - ~3 KB.
inline std::string RealisticNode(int i) {
  std::string images;
  for (int k = 0; k < 6; ++k) {
    images += fmt::format(R"({}{{"names":["nvcr.io/nvidia/pytorch@sha256:{:064x}","nvcr.io/nvidia/pytorch:24.0{}-py3"],"sizeBytes":{}}})",
                          k ? "," : "", uint64_t(i) * 7919 + k, k, 9000000000LL + k);
  }
  return fmt::format(
      R"({{"metadata":{{"name":"{0}","uid":"0b1c{1:08d}-aaaa-bbbb-cccc-000000000000","resourceVersion":"{1}","creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","kubernetes.io/hostname":"{0}","kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"p4d.24xlarge","topology.kubernetes.io/region":"us-east-1","topology.kubernetes.io/zone":"us-east-1a","nvidia.com/gpu.count":"8","nvidia.com/gpu.present":"true"}},"annotations":{{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true","topofit.io/gpu-topology":"{2}"}}}},"spec":{{"podCIDR":"10.{3}.{4}.0/24","providerID":"aws:///us-east-1a/i-{1:017x}"}},"status":{{"capacity":{{"cpu":"96","ephemeral-storage":"1056753Mi","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"1176453124Ki","nvidia.com/gpu":"8","pods":"110"}},"allocatable":{{"cpu":"95690m","ephemeral-storage":"973800529435","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"1163853572Ki","nvidia.com/gpu":"8","pods":"110"}},"conditions":[{{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-11-22T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"}},{{"type":"DiskPressure","status":"False","lastHeartbeatTime":"2026-11-22T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletHasNoDiskPressure","message":"kubelet has no disk pressure"}},{{"type":"PIDPressure","status":"False","lastHeartbeatTime":"2026-11-22T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletHasSufficientPID","message":"kubelet has sufficient PID available"}},{{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-22T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletReady","message":"kubelet is posting ready status"}}],"addresses":[{{"type":"InternalIP","address":"10.{3}.{4}.10"}},{{"type":"Hostname","address":"{0}"}}],"daemonEndpoints":{{"kubeletEndpoint":{{"Port":10250}}}},"nodeInfo":{{"machineID":"ec2{1:029x}","systemUUID":"ec2{1:029x}","bootID":"7d4f{1:028x}","kernelVersion":"5.10.223-211.872.amzn2.x86_64","osImage":"Amazon Linux 2","containerRuntimeVersion":"containerd://1.7.11","kubeletVersion":"v1.30.2","kubeProxyVersion":"v1.30.2","operatingSystem":"linux","architecture":"amd64"}},"images":[{5}]}}}})",
      Ec2NodeName(i), i, Profile(i), i / 256, i % 256, images);
}

// A bound pod on 7 of every 8 of `nodes` (8 GPUs each) holding random GPUs, CPU and memory, as a
// cluster in use looks: nearly every node in a state of its own, a few failing a 2-GPU pod.
inline std::vector<k8s::PodObject> BusyPods(const std::vector<std::string>& nodes, unsigned seed = 42) {
  std::mt19937 rng(seed);
  std::vector<k8s::PodObject> pods;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i % 8 == 0) continue;
    std::string ids;
    int gpus = 0;
    for (int g = 0; g < 8; ++g)
      if (rng() % 2) ids += (ids.empty() ? "" : ",") + std::to_string(g), ++gpus;
    if (gpus == 0) continue;
    k8s::PodObject& p = pods.emplace_back();
    p.meta.uid = fmt::format("busy-{}", i);
    p.meta.name = p.meta.uid;
    p.meta.namespace_ = "busy";
    p.meta.annotations[k8s::kGpuIdsAnnotation] = ids;
    p.gpus = gpus;
    p.cpu_milli = int64_t(rng() % 64) * 1000;
    p.memory_bytes = int64_t(rng() % 512) << 30;
    p.node_name = nodes[i];
    p.phase = "Running";
  }
  return pods;
}

}  // namespace topofit::k8s::testing
