#pragma once
// RecordingSink: a ClusterSink that keeps what it was told, for tests; WaitFor polls a condition.

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "extender/apiclient/cluster_sink.h"

namespace topofit::apiclient::testing {

class RecordingSink final : public ClusterSink {
 public:
  void ApplyNode(const k8s::NodeObject& node) override {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_[node.meta.name] = node;
  }
  void DeleteNode(std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_.erase(std::string(name));
  }
  void ApplyPod(const k8s::PodObject& pod) override {
    std::lock_guard<std::mutex> lock(mu_);
    pods_[pod.meta.uid] = pod;
  }
  void DeletePod(std::string_view uid) override {
    std::lock_guard<std::mutex> lock(mu_);
    pods_.erase(std::string(uid));
  }
  std::map<std::string, k8s::NodeObject> nodes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return nodes_;
  }
  std::map<std::string, k8s::PodObject> pods() const {
    std::lock_guard<std::mutex> lock(mu_);
    return pods_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, k8s::NodeObject> nodes_;
  std::map<std::string, k8s::PodObject> pods_;  // by uid
};

// Polls `cond` every 5 ms for up to `timeout`; true once it holds.
inline bool WaitFor(const std::function<bool()>& cond,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

}  // namespace topofit::apiclient::testing
