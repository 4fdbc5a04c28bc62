#include "extender/k8s/kube_writer.h"

#include <fmt/format.h>

namespace topofit::k8s {

Status InMemoryKubeWriter::Bind(const std::string& ns, const std::string& name, const std::string& uid,
                                const std::string& node, const std::map<std::string, std::string>& annotations) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fail_bind_.empty()) return Error{std::exchange(fail_bind_, {})};
  BoundPod& pod = pods_[ns + "/" + name];
  if (!pod.node.empty()) {
    return Error{fmt::format("pod {}/{} is already assigned to node {}", ns, name, pod.node)};
  }
  pod.uid = uid;
  pod.node = node;
  for (const auto& [k, v] : annotations) pod.annotations[k] = v;
  ++binds_;
  return Status::Ok();
}

void InMemoryKubeWriter::RecordPodEvent(PodEvent event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(event));
  if (events_.size() > kMaxEvents) events_.pop_front();
}

std::vector<PodEvent> InMemoryKubeWriter::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {events_.begin(), events_.end()};
}

void InMemoryKubeWriter::NominatePod(const std::string& ns, const std::string& name, const std::string&,
                                     const std::string& node) {
  std::lock_guard<std::mutex> lock(mu_);
  if (nominations_.size() >= kMaxEvents) nominations_.erase(nominations_.begin());
  nominations_[ns + "/" + name] = node;
}

std::map<std::string, std::string> InMemoryKubeWriter::Nominations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return nominations_;
}

bool InMemoryKubeWriter::Forget(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  nominations_.erase(ns + "/" + name);
  return pods_.erase(ns + "/" + name) > 0;
}

void InMemoryKubeWriter::FailNextBind(std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_bind_ = std::move(message);
}

std::map<std::string, InMemoryKubeWriter::BoundPod> InMemoryKubeWriter::Pods() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pods_;
}

size_t InMemoryKubeWriter::bind_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return binds_;
}

}  // namespace topofit::k8s
