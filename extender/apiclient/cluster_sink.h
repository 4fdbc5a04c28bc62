#pragma once
// ClusterSink: where the live watch delivers decoded objects - the cluster model in production
// (ModelSink, model_sink.h), a recorder in tests.
//
// Calls come from the watch threads (nodes and pods on different threads, each kind in order);
// implementations must be thread-safe. Every call is idempotent from the caller's point of view:
// a re-list re-applies objects it already applied.

#include <string_view>

#include "extender/k8s/objects.h"

namespace topofit::apiclient {

class ClusterSink {
 public:
  virtual ~ClusterSink() = default;
  virtual void ApplyNode(const k8s::NodeObject& node) = 0;
  virtual void DeleteNode(std::string_view name) = 0;
  virtual void ApplyPod(const k8s::PodObject& pod) = 0;
  virtual void DeletePod(std::string_view uid) = 0;
};

}  // namespace topofit::apiclient
