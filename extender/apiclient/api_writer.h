#pragma once
// ApiWriter: the bind path's one write to the API server - the v1 Binding, carrying the pod's
// topofit.io/gpu-ids annotation - with the API server's own message on failure.
//
// Implements k8s::KubeWriter (the interface the server's bind verb uses). Bind POSTs
// pods/{name}/binding with metadata.uid (kube-apiserver's UID precondition) and metadata.annotations,
// which kube-apiserver merges into the pod in the update that sets spec.nodeName. When that fails it
// reads the pod back and reports success if the pod is already bound to `node` with this uid and these
// annotations (a bind retried after its reply was lost), otherwise an Error with the Status message
// ("409: pod p is already assigned to node n"). The caller releases its reservation on any Error.
// Thread-safe; borrows the ApiClient (which must then outlive it) or shares it.

#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "extender/apiclient/api_client.h"
#include "extender/apiclient/events.h"
#include "extender/apiclient/write_queue.h"
#include "extender/k8s/kube_writer.h"

namespace topofit::apiclient {

class ApiWriter final : public k8s::KubeWriter {
 public:
  explicit ApiWriter(ApiClient& api) : api_(api), writes_(std::make_unique<WriteQueue>()) {}
  explicit ApiWriter(std::shared_ptr<ApiClient> api)
      : api_(*api), owned_(std::move(api)), writes_(std::make_unique<WriteQueue>()) {}

  Status Bind(const std::string& namespace_, const std::string& name, const std::string& uid,
              const std::string& node, const std::map<std::string, std::string>& annotations) override;
  // Queued on a WriteQueue (write_queue.h), as are requeues: component "topofit".
  void RecordPodEvent(k8s::PodEvent event) override;
  // A JSON merge patch of the pod's topofit.io/requeued-at, with metadata.uid as a precondition (a
  // re-created pod of the same name is left alone: 409).
  void RequeuePod(const std::string& ns, const std::string& name, const std::string& uid) override;
  // A merge patch of the pod's status subresource, with the uid as precondition.
  void NominatePod(const std::string& ns, const std::string& name, const std::string& uid,
                   const std::string& node) override;

 private:
  ApiClient& api_;
  std::shared_ptr<ApiClient> owned_;
  std::unique_ptr<WriteQueue> writes_;  // Declared last: stops (and sends what is queued) first.
};

// "/api/v1/namespaces/<ns>/pods/<name>" with both parts percent-encoded.
std::string PodPath(const std::string& namespace_, const std::string& name);

// Merges `annotations` into pod ns/name (MergePatch, "annotate pod ns/name"), with metadata.uid as a
// precondition when `uid` is given: a re-created pod of the same name is left alone (409).
Status PatchPodAnnotations(ApiClient& api, const std::string& ns, const std::string& name, const std::string& uid,
                           const std::map<std::string, std::string>& annotations);

}  // namespace topofit::apiclient
