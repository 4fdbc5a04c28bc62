#include "extender/apiclient/live_cluster.h"

#include <cstdio>

#include "base/log.h"

namespace topofit::apiclient {
namespace {

LogFn OrLog(LogFn log) {
  if (log) return log;
  return [](const std::string& msg) { Log(LogLevel::kWarn, "cluster watch", {{"detail", msg}}); };
}

}  // namespace

ReflectorOptions WatchOptions(const LiveOptions& o, const char* kind, const char* path, const char* selector) {
  ReflectorOptions r;
  r.kind = kind;
  r.path = path;
  r.field_selector = selector;
  r.timings = o.watch;
  LogFn log = OrLog(o.log);
  r.log = [log, kind = std::string(kind)](const std::string& msg) { log("watch " + kind + ": " + msg); };
  if (o.on_watch_state) {
    r.on_connection = [cb = o.on_watch_state, kind = std::string(kind)](bool connected) { cb(kind, connected); };
  }
  return r;
}

Result<ClusterConfig> ResolveClusterConfig(const LiveOptions& options) {
  if (!options.kubeconfig.empty()) return LoadKubeconfig(options.kubeconfig, options.context);
  if (options.in_cluster) return InClusterConfig(options.secrets_dir);
  return Error{"no API server: give --kubeconfig or run in a pod (--in-cluster)"};
}

Result<std::shared_ptr<ApiClient>> ConnectApi(const LiveOptions& options) {
  auto cfg = ResolveClusterConfig(options);
  if (!cfg.ok()) return Error{cfg.error()};
  auto api = ApiClient::Create(std::move(*cfg), options.api);
  if (!api.ok()) return Error{api.error()};
  return std::shared_ptr<ApiClient>(std::move(*api));
}

Result<std::unique_ptr<LiveCluster>> LiveCluster::Start(const LiveOptions& options, ClusterSink& sink) {
  auto api = ConnectApi(options);
  if (!api.ok()) return Error{api.error()};
  std::unique_ptr<LiveCluster> live(new LiveCluster(std::move(*api), sink, nullptr, options));
  live->Launch();
  return live;
}

std::unique_ptr<LiveCluster> LiveCluster::Start(const LiveOptions& options, std::shared_ptr<ApiClient> api,
                                                std::unique_ptr<ClusterSink> sink) {
  ClusterSink& ref = *sink;
  std::unique_ptr<LiveCluster> live(new LiveCluster(std::move(api), ref, std::move(sink), options));
  live->Launch();
  return live;
}

LiveCluster::LiveCluster(std::shared_ptr<ApiClient> api, ClusterSink& sink,
                         std::unique_ptr<ClusterSink> owned, const LiveOptions& options)
    : owned_sink_(std::move(owned)),
      api_(std::move(api)),
      writer_(*api_),
      on_ready_(options.on_ready),
      node_store_(sink, OrLog(options.log)),
      pod_store_(sink, OrLog(options.log)) {
  auto synced = [this] { OnSynced(); };
  nodes_ = std::make_unique<Reflector>(*api_, node_store_, WatchOptions(options, "nodes", "/api/v1/nodes", ""),
                                       synced);
  pods_ = std::make_unique<Reflector>(*api_, pod_store_,
                                      WatchOptions(options, "pods", "/api/v1/pods", kLivePodFieldSelector), synced);
  if (!options.watch_dra) return;
  for (DraKind kind : {DraKind::kDeviceClass, DraKind::kResourceSlice, DraKind::kResourceClaim}) {
    const std::string resource(ResourceOf(kind));
    dra_stores_.push_back(std::make_unique<DraStore>(kind, sink, OrLog(options.log)));
    dra_.push_back(std::make_unique<Reflector>(
        *api_, *dra_stores_.back(),
        WatchOptions(options, resource.c_str(), ("/apis/resource.k8s.io/v1/" + resource).c_str(), "")));
  }
}

void LiveCluster::Launch() {
  nodes_->Start();
  pods_->Start(nodes_.get());
  for (auto& r : dra_) r->Start(nodes_.get());
}

void LiveCluster::OnSynced() {
  if (ready() && on_ready_ && !ready_fired_.exchange(true)) on_ready_();
}

LiveCluster::~LiveCluster() { Stop(); }

void LiveCluster::Stop() {
  for (auto& r : dra_) r->Stop();
  pods_->Stop();
  nodes_->Stop();
}

}  // namespace topofit::apiclient
