#pragma once
// NodePublisher: the topology publisher's three operations on the Kubernetes API, behind an interface
// so it is tested without a cluster (FakeNodePublisher) and runs against the API client in production
// (KubeNodePublisher, kube_node_publisher.h).
//
// Contract: GetNodeAnnotations returns the node's current metadata.annotations (empty map when it has
// none; an Error when the node cannot be read). PatchNodeAnnotations sets exactly the given keys and
// leaves every other annotation alone (a JSON merge patch). CreateNodeEvent records a core/v1 Event
// whose involvedObject is the Node. Implementations are used from one thread.

#include <map>
#include <string>

#include "base/status.h"

namespace topofit::node {

struct NodeEvent {
  std::string type;     // "Normal" or "Warning"
  std::string reason;   // CamelCase, e.g. "TopologyUnavailable"
  std::string message;  // For humans; the parser's "line L, column C: ..." text included.
};

class NodePublisher {
 public:
  virtual ~NodePublisher() = default;
  virtual Result<std::map<std::string, std::string>> GetNodeAnnotations(const std::string& node) = 0;
  virtual Status PatchNodeAnnotations(const std::string& node,
                                      const std::map<std::string, std::string>& annotations) = 0;
  virtual Status CreateNodeEvent(const std::string& node, const NodeEvent& event) = 0;
};

}  // namespace topofit::node
