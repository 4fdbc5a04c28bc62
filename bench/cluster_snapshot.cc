#include "bench/cluster_snapshot.h"

#include <nlohmann/json.hpp>

#include "extender/k8s/objects.h"

namespace topofit::bench {

std::string ClusterSnapshotJson(const SimCluster& cluster) {
  using nlohmann::json;
  json items = json::array();
  for (const SimNode& n : cluster.nodes()) {
    json resources = {{"cpu", std::to_string(n.spec->cpu_milli) + "m"},
                      {"memory", std::to_string(n.spec->memory_mib) + "Mi"},
                      {k8s::kGpuResource, std::to_string(n.spec->gpus)}};
    json meta = {{"name", n.spec->name}, {"uid", "bench-node-" + n.spec->name}};
    if (n.type >= 0) meta["annotations"] = {{k8s::kTopologyAnnotation, cluster.types()[n.type].annotation}};
    if (!n.spec->model.empty()) meta["labels"] = {{k8s::kGfdProductLabel, n.spec->model}};  // As GFD labels it.
    for (const auto& [k, v] : n.spec->labels) meta["labels"][k] = v;  // A shared node's GFD labels.
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata", meta},
                     {"status", {{"capacity", resources}, {"allocatable", resources}}}});
  }
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump(1) + "\n";
}

}  // namespace topofit::bench
