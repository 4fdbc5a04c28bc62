#include "extender/groups/group_nodes.h"

#include <string_view>

namespace topofit::groups {

GroupNodes ReadGroupNodes(const cluster::ClusterModel& model, const DomainMap& domains) {
  return ReadGroupNodes(model.Read(), domains);
}

GroupNodes ReadGroupNodes(const cluster::ClusterModel::Reader& reader, const DomainMap& domains) {
  GroupNodes out;
  out.domains = &domains;
  out.nodes.resize(domains.size());
  std::vector<std::string_view> names;
  names.reserve(domains.size());
  for (size_t i = 0; i < domains.size(); ++i) names.push_back(domains.name(i));
  reader.FindEach(names, [&](uint32_t i, const cluster::NodeState* node) {
    if (!node || !node->topology()) return;
    out.nodes[i] = GroupNode{node->topology(), node->usable(), node->free()};
  });
  return out;
}

}  // namespace topofit::groups
