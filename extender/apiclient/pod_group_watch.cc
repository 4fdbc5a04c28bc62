#include "extender/apiclient/pod_group_watch.h"

#include "base/log.h"
#include "extender/k8s/object_decoder.h"

namespace topofit::apiclient {

namespace {

std::string GroupKey(const std::string& namespace_, const std::string& name) { return namespace_ + "/" + name; }

}  // namespace

ObjectStore::Applied PodGroupFeed::Apply(std::string_view json) {
  auto group = k8s::DecodePodGroup(json, api_);
  if (!group.ok()) {
    log_("podgroup skipped: " + group.error());
    return {};
  }
  if (group->api != api_) {  // Its apiVersion names the other API: not this watch's.
    log_("podgroup skipped: " + group->key() + " is not of " + std::string(k8s::ToString(api_)));
    return {};
  }
  if (store_.Put(*group) == cluster::PodGroupStore::PutResult::kFull) {
    log_("podgroup skipped: " + group->key() + ": the store holds its limit of PodGroups");
    return {};
  }
  std::string key = GroupKey(group->namespace_, group->name);
  return {key, key};
}

void PodGroupFeed::Delete(const std::string& key) {
  size_t slash = key.find('/');
  store_.Erase(api_, key.substr(0, slash), key.substr(slash + 1));
}

std::string PodGroupFeed::KeyOf(const nlohmann::json& object) const {
  std::string name = MetaField(object, "name");
  return name.empty() ? std::string() : GroupKey(MetaField(object, "namespace"), name);
}

namespace {

ReflectorOptions PodGroupWatchOptions(const LiveOptions& options, const char* kind, const char* path,
                                      std::chrono::milliseconds absent_retry) {
  ReflectorOptions r = WatchOptions(options, kind, path, "");
  r.on_connection = nullptr;  // topofit_watch_connected is the model's watches' (nodes, pods).
  r.absent_retry = absent_retry;
  return r;
}

LogFn FeedLog(const LiveOptions& options, const char* kind) {
  LogFn log = options.log;
  if (!log) log = [](const std::string& msg) { Log(LogLevel::kWarn, "cluster watch", {{"detail", msg}}); };
  return [log, kind = std::string(kind)](const std::string& msg) { log("watch " + kind + ": " + msg); };
}

}  // namespace

PodGroupWatch::PodGroupWatch(ApiClient& api, cluster::PodGroupStore& store, const LiveOptions& options,
                             std::chrono::milliseconds absent_retry)
    : workload_feed_(store, k8s::PodGroupObject::Api::kWorkload, FeedLog(options, "podgroups.scheduling.k8s.io")),
      coscheduling_feed_(store, k8s::PodGroupObject::Api::kCoscheduling,
                         FeedLog(options, "podgroups.scheduling.x-k8s.io")) {
  workload_ = std::make_unique<Reflector>(
      api, workload_feed_,
      PodGroupWatchOptions(options, "podgroups.scheduling.k8s.io", kWorkloadPodGroupsPath, absent_retry));
  coscheduling_ = std::make_unique<Reflector>(
      api, coscheduling_feed_,
      PodGroupWatchOptions(options, "podgroups.scheduling.x-k8s.io", kCoschedulingPodGroupsPath, absent_retry));
  workload_->Start();
  coscheduling_->Start();
}

PodGroupWatch::~PodGroupWatch() { Stop(); }

void PodGroupWatch::Stop() {
  workload_->Stop();
  coscheduling_->Stop();
}

}  // namespace topofit::apiclient
