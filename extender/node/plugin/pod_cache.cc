#include "extender/node/plugin/pod_cache.h"

#include <sys/stat.h>

#include "base/files.h"
#include "base/log.h"

namespace topofit::node {

std::shared_ptr<const std::vector<NodePod>> PodCache::Snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

void PodCache::Publish() {
  auto pods = std::make_shared<std::vector<NodePod>>();
  for (const auto& [uid, pod] : by_uid_) pods->push_back(pod);
  snapshot_ = std::move(pods);
}

void PodCache::Note(const NodePod& pod) {
  if (pod.plan_error.empty()) return;
  if (logged_errors_.insert(pod.uid + "\n" + pod.plan_error).second) {
    Log(LogLevel::kWarn, "pod's gpu-plan does not parse; treated as unplanned",
        {{"pod", pod.key()}, {"error", pod.plan_error}});
  }
}

void PodCache::Set(std::vector<NodePod> pods) {
  std::lock_guard lock(mu_);
  by_uid_.clear();
  for (auto& p : pods) {
    Note(p);
    by_uid_[p.uid] = std::move(p);
  }
  Publish();
}

void PodCache::BeginList() {
  std::lock_guard lock(mu_);
  listing_.clear();
}

void PodCache::ListItem(std::string_view json) {
  auto item = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  auto p = DecodeNodePod(item, resource_);
  if (!p) {
    Log(LogLevel::kWarn, "pod skipped", {{"error", p.error()}});
    return;
  }
  std::lock_guard lock(mu_);
  Note(*p);
  listing_[p->uid] = std::move(*p);
}

void PodCache::EndList() {
  std::lock_guard lock(mu_);
  by_uid_ = std::move(listing_);
  listing_.clear();
  Publish();
}

void PodCache::Upsert(const nlohmann::json& object) {
  auto p = DecodeNodePod(object, resource_);
  if (!p) return Log(LogLevel::kWarn, "pod skipped", {{"error", p.error()}});
  std::lock_guard lock(mu_);
  Note(*p);
  by_uid_[p->uid] = std::move(*p);
  Publish();
}

void PodCache::Remove(const nlohmann::json& object) {
  std::string uid;
  if (auto m = object.find("metadata"); m != object.end() && m->is_object()) uid = m->value("uid", std::string());
  std::lock_guard lock(mu_);
  if (by_uid_.erase(uid)) Publish();
}

Status PodCache::PollFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Error{"pods file " + path + ": cannot stat"};
  std::string stamp = std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "/" +
                      std::to_string(st.st_size);
  {
    std::lock_guard lock(mu_);
    if (stamp == file_stamp_) return Status::Ok();
  }
  auto text = ReadFile(path);
  if (!text) return Error{text.error()};
  auto pods = DecodeNodePods(*text, resource_);
  if (!pods) return Error{"pods file " + path + ": " + pods.error()};
  Set(std::move(*pods));
  std::lock_guard lock(mu_);
  file_stamp_ = stamp;
  return Status::Ok();
}

}  // namespace topofit::node
