#include "extender/cluster/dra_topology.h"

#include <fmt/format.h>

namespace topofit::cluster {

TopoMatrix DraMatrix(const DraNodeGpus& gpus) {
  TopoMatrix m;
  const size_t n = gpus.gpus.size();
  m.gpu_links.assign(n, std::vector<Link>(n));
  for (size_t i = 0; i < n; ++i) {
    const DraGpu& a = gpus.gpus[i];
    m.gpu_names.push_back(fmt::format("GPU{}", i));
    m.cpu_affinity.emplace_back();
    m.numa_affinity.push_back(a.numa >= 0 ? std::optional<int>(a.numa) : std::nullopt);
    m.numa_affinity_list.push_back(a.numa >= 0 ? std::to_string(a.numa) : std::string());
    m.gpu_numa_id.emplace_back();
    m.gpu_nic.emplace_back();
    for (size_t j = 0; j < n; ++j) {
      const DraGpu& b = gpus.gpus[j];
      LinkClass cls = LinkClass::Node;
      if (i == j) cls = LinkClass::Self;
      else if (!a.pcie_root.empty() && a.pcie_root == b.pcie_root) cls = LinkClass::Phb;
      else if (a.numa >= 0 && b.numa >= 0) cls = a.numa == b.numa ? LinkClass::Node : LinkClass::Sys;
      m.gpu_links[i][j] = Link{cls, 0};
    }
  }
  return m;
}

}  // namespace topofit::cluster
