#pragma once
// FakeNodePublisher: an in-memory NodePublisher for tests. Holds each node's annotations, counts the
// patches, keeps every event, and fails reads or writes on demand.

#include <map>
#include <string>
#include <vector>

#include "extender/node/node_publisher.h"

namespace topofit::node {

class FakeNodePublisher : public NodePublisher {
 public:
  Result<std::map<std::string, std::string>> GetNodeAnnotations(const std::string& node) override {
    if (fail_reads) return Error{"503: the server is currently unable to handle the request"};
    if (!nodes.count(node)) return Error{"404: nodes \"" + node + "\" not found"};
    return nodes[node];
  }
  Status PatchNodeAnnotations(const std::string& node,
                              const std::map<std::string, std::string>& annotations) override {
    if (fail_writes) return Error{"403: forbidden"};
    if (!nodes.count(node)) return Error{"404: nodes \"" + node + "\" not found"};
    for (const auto& [k, v] : annotations) nodes[node][k] = v;
    ++patches;
    return Status::Ok();
  }
  Status CreateNodeEvent(const std::string& node, const NodeEvent& event) override {
    events.push_back(event);
    return Status::Ok();
  }

  std::map<std::string, std::map<std::string, std::string>> nodes;
  std::vector<NodeEvent> events;
  int patches = 0;
  bool fail_reads = false;
  bool fail_writes = false;
};

}  // namespace topofit::node
