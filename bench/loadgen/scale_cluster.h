#pragma once
// The large clusters of the memory and soak benches: Nodes as kubelet reports them
// (k8s::testing::RealisticNode, ~3 KB) and Pods as the API server returns them (~1 KB: labels, a
// container with requests and limits, status), written as `kubectl get nodes,pods -A -o json` prints
// them (a List, items in kubectl's order: nodes, then pods).
//
// Pod i runs on node i % nodes, in slot i / nodes of it. Nodes come in four fills, in turn: one
// 8-GPU pod, two 4-GPU, four 2-GPU, eight 1-GPU pods (every GPU held, each pod's topofit.io/gpu-ids
// set); the node's other slots hold CPU-only pods. 10,000 nodes and 100,000 pods: 37,500 GPU pods,
// 62,500 CPU-only.

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "extender/k8s/testing/busy_cluster.h"

namespace topofit::bench {

// How many GPUs pod `slot` of node `node` holds, and the first of them (0 for a CPU-only pod).
inline int ScalePodGpus(int node, int slot, int* first) {
  int size = 8 >> (node % 4);
  *first = slot * size;
  return slot < 8 / size ? size : 0;
}

inline std::string ScalePodJson(int i, int nodes) {
  int node = i % nodes, slot = i / nodes, first = 0;
  int gpus = ScalePodGpus(node, slot, &first);
  std::string ids, annotations = "{}", gpu_request;
  if (gpus > 0) {
    for (int g = first; g < first + gpus; ++g) ids += (ids.empty() ? "" : ",") + std::to_string(g);
    annotations = fmt::format(R"({{"topofit.io/gpu-ids":"{}"}})", ids);
    gpu_request = fmt::format(R"(,"nvidia.com/gpu":"{}")", gpus);
  }
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"job-{0}-worker-0","namespace":"team-{1}","uid":"5e1d{0:08d}-aaaa-bbbb-cccc-000000000000","resourceVersion":"{2}","creationTimestamp":"2026-11-20T00:00:00Z","labels":{{"app.kubernetes.io/name":"train","batch.kubernetes.io/job-name":"job-{0}","team":"team-{1}"}},"annotations":{3}}},"spec":{{"nodeName":"{4}","schedulerName":"default-scheduler","priority":0,"restartPolicy":"Never","serviceAccountName":"default","containers":[{{"name":"main","image":"nvcr.io/nvidia/pytorch:24.05-py3","command":["torchrun","train.py"],"resources":{{"requests":{{"cpu":"{5}","memory":"{6}Gi"{7}}},"limits":{{"cpu":"{5}","memory":"{6}Gi"{7}}}}}}}]}},"status":{{"phase":"Running","hostIP":"10.{8}.{9}.10","podIP":"100.{8}.{9}.{10}","startTime":"2026-11-20T00:00:05Z","qosClass":"Guaranteed"}}}})",
      i, i % 20, 1000000 + i, annotations, k8s::testing::Ec2NodeName(node), 1 + gpus * 8, 4 + gpus * 64,
      gpu_request, node / 256, node % 256, 2 + slot);
}

// The Node as a List item names its kind (kubectl's items do).
inline std::string ScaleNodeJson(int i) {
  return R"({"apiVersion":"v1","kind":"Node",)" + k8s::testing::RealisticNode(i).substr(1);
}

// Writes the snapshot to `path`; its size in bytes, or -1 when it cannot be written.
inline long WriteScaleSnapshot(const std::string& path, int nodes, int pods) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return -1;
  long size = 0;
  auto put = [&](const std::string& s) { size += long(std::fwrite(s.data(), 1, s.size(), f)); };
  put(R"({"apiVersion":"v1","items":[)");
  bool first = true;
  auto item = [&](const std::string& s) {
    put((first ? "\n" : ",\n") + s);
    first = false;
  };
  for (int i = 0; i < nodes; ++i) item(ScaleNodeJson(i));
  for (int i = 0; i < pods; ++i) item(ScalePodJson(i, nodes));
  put("\n],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}\n");
  return std::fclose(f) == 0 ? size : -1;
}

}  // namespace topofit::bench
