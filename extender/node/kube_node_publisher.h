#pragma once
// KubeNodePublisher: NodePublisher over the Kubernetes API client (extender/apiclient/api_client.h).
//
// GET /api/v1/nodes/{name} for the annotations (remembering the node's uid for events), a JSON
// merge patch on the same path for annotations (only the given keys change), and a core/v1 Event in
// namespace "default" (where events about cluster-scoped objects go) from component topofit-node
// (the subcommand that published the topology before `topofit node` took it over; kept, as Events are
// what operators and their tooling filter on).
// Errors carry the API server's message ("403: nodes \"n\" is forbidden: ..."). Borrows the
// ApiClient, which must outlive it.

#include <memory>
#include <string>

#include "extender/apiclient/api_client.h"
#include "extender/node/node_publisher.h"

namespace topofit::node {

class KubeNodePublisher : public NodePublisher {
 public:
  explicit KubeNodePublisher(apiclient::ApiClient& api) : api_(api) {}

  Result<std::map<std::string, std::string>> GetNodeAnnotations(const std::string& node) override;
  Status PatchNodeAnnotations(const std::string& node,
                              const std::map<std::string, std::string>& annotations) override;
  Status CreateNodeEvent(const std::string& node, const NodeEvent& event) override;

 private:
  apiclient::ApiClient& api_;
  std::string node_uid_;
};

// Connects like `topofit serve`: the kubeconfig at `kubeconfig` (with `context`) when given, else
// the in-cluster service account.
Result<std::unique_ptr<apiclient::ApiClient>> ConnectToCluster(const std::string& kubeconfig,
                                                          const std::string& context);

}  // namespace topofit::node
