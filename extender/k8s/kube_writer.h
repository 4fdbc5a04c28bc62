#pragma once
// KubeWriter: the Kubernetes write a bind makes, behind an interface.
//
// Bind creates the pod's Binding (POST .../pods/{name}/binding, target kind Node) carrying the pod's
// new annotations (topofit.io/gpu-ids): kube-apiserver merges a Binding's metadata.annotations into
// the pod in the same update that sets spec.nodeName, under a UID precondition, so a bind is one
// write and a pod is never annotated without being bound. The in-memory implementation below serves
// tests and snapshot mode; the API client of extender/apiclient/ implements the same interface.
// Implementations must be thread-safe: binds run concurrently. Errors are returned, never thrown.

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace topofit::k8s {

// An Event on a pod (core v1: involvedObject kind Pod), as `kubectl describe pod` lists them.
struct PodEvent {
  std::string ns, name, uid;
  std::string type = "Normal";  // "Normal" or "Warning"
  std::string reason;
  std::string message;
};

class KubeWriter {
 public:
  virtual ~KubeWriter() = default;
  // Records `event` on its pod, best effort and without waiting: a failure is logged, never returned.
  virtual void RecordPodEvent(PodEvent event) = 0;
  // Binds pod ns/name (uid guards against a re-created pod) to `node` and sets `annotations` on it,
  // in one write. An Error leaves the pod as it was: neither bound nor annotated.
  virtual Status Bind(const std::string& ns, const std::string& name, const std::string& uid,
                      const std::string& node, const std::map<std::string, std::string>& annotations) = 0;
  // Asks kube-scheduler to try pending pod ns/name (uid) again: sets topofit.io/requeued-at on it, an
  // update kube-scheduler counts as an event for a pod an extender turned away (capacity_waits.h).
  // Best effort and without waiting, like RecordPodEvent.
  virtual void RequeuePod(const std::string& ns, const std::string& name, const std::string& uid) = 0;
  // Sets pending pod ns/name's (uid) status.nominatedNodeName to `node` ("" clears it): kube-scheduler
  // evaluates that node alone first on its next attempt (group_coordinator.h, step 5). Best effort and
  // without waiting, like RecordPodEvent. A pod bound before the write comes is not an error (the API
  // server refuses the field on a bound pod; nothing is left to nominate).
  virtual void NominatePod(const std::string& ns, const std::string& name, const std::string& uid,
                           const std::string& node) = 0;
};

// Records the writes; a pod can be bound once (a second Bind fails, as the API server's does) until
// Forget (the pod was deleted). Keeps the last kMaxEvents events: snapshot mode serves for months.
// FailNextBind makes the next call fail, for tests of the rollback path.
class InMemoryKubeWriter : public KubeWriter {
 public:
  struct BoundPod {
    std::string uid;
    std::string node;
    std::map<std::string, std::string> annotations;
  };

  Status Bind(const std::string& ns, const std::string& name, const std::string& uid, const std::string& node,
              const std::map<std::string, std::string>& annotations) override;
  void RecordPodEvent(PodEvent event) override;
  // Nothing to write: no kube-scheduler stands behind an in-memory cluster (and nothing calls it
  // without a watch).
  void RequeuePod(const std::string&, const std::string&, const std::string&) override {}
  // Records the nomination (Nominations()); nothing else reads it.
  void NominatePod(const std::string& ns, const std::string& name, const std::string& uid,
                   const std::string& node) override;
  // "ns/name" -> the last node nominated (at most kMaxEvents pods; a pod forgotten is dropped).
  std::map<std::string, std::string> Nominations() const;

  static constexpr size_t kMaxEvents = 1000;
  // The pod ns/name is gone: a pod of that name may be bound again. False when none was bound.
  bool Forget(const std::string& ns, const std::string& name);
  void FailNextBind(std::string message);
  std::vector<PodEvent> Events() const;
  // "ns/name" -> what was written.
  std::map<std::string, BoundPod> Pods() const;
  size_t bind_count() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, BoundPod> pods_;
  size_t binds_ = 0;
  std::string fail_bind_;
  std::deque<PodEvent> events_;
  std::map<std::string, std::string> nominations_;  // At most kMaxEvents.
};

}  // namespace topofit::k8s
