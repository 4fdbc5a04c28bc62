#pragma once
// KubeWriter: the Kubernetes writes a bind makes, behind an interface.
//
// Bind first annotates the pod with its GPU ids (topofit.io/gpu-ids), then creates the pod's Binding
// (POST .../pods/{name}/binding, target kind Node). The in-memory implementation below serves tests
// and snapshot mode; the API client of extender/apiclient/ implements the same interface. Implementations
// must be thread-safe: binds run concurrently. Errors are returned, never thrown.

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace topofit::k8s {

class KubeWriter {
 public:
  virtual ~KubeWriter() = default;
  // Sets metadata.annotations[key] = value on pod ns/name (a merge patch).
  virtual Status PatchPodAnnotation(const std::string& ns, const std::string& name,
                                    const std::string& key, const std::string& value) = 0;
  // Creates the Binding of pod ns/name (uid guards against a recreated pod) to `node`.
  virtual Status Bind(const std::string& ns, const std::string& name, const std::string& uid,
                      const std::string& node) = 0;
};

// Records the writes; a pod can be bound once (a second Bind fails, as the API server's does).
// FailNext* make the next call fail, for tests of the rollback path.
class InMemoryKubeWriter : public KubeWriter {
 public:
  struct BoundPod {
    std::string uid;
    std::string node;
    std::map<std::string, std::string> annotations;
  };

  Status PatchPodAnnotation(const std::string& ns, const std::string& name, const std::string& key,
                            const std::string& value) override;
  Status Bind(const std::string& ns, const std::string& name, const std::string& uid,
              const std::string& node) override;

  void FailNextPatch(std::string message);
  void FailNextBind(std::string message);
  // "ns/name" -> what was written.
  std::map<std::string, BoundPod> Pods() const;
  size_t bind_count() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, BoundPod> pods_;
  size_t binds_ = 0;
  std::string fail_patch_, fail_bind_;
};

}  // namespace topofit::k8s
