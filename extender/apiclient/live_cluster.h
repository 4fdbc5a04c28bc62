#pragma once
// LiveCluster: keeps a ClusterSink equal to the cluster - all Nodes, and the Pods that request GPUs
// and have not finished - from the API server, and owns the client the bind path writes with.
//
// Two Reflectors, each on its own thread: nodes, then pods (pods list only after the first node list,
// so holdings find their nodes; the model parks them otherwise). Three more, after the first node
// list too, watch resource.k8s.io/v1 DeviceClasses, ResourceSlices and ResourceClaims (DraStore;
// docs/dra.md) when LiveOptions::watch_dra is set; they do not gate ready() or connected(): a
// cluster without that API (or RBAC that does not grant it) still schedules its device-plugin GPUs. The pod watch uses the field
// selector status.phase!=Succeeded,status.phase!=Failed, so finished pods arrive as DELETED.
// After a restart the sink is rebuilt from the API alone: a bound pod's GPUs come from its
// topofit.io/gpu-ids annotation.
// ready() is true once the first list of both kinds has been applied; it never goes back (a broken
// watch keeps serving the last state while it reconnects). connected() and on_watch_state say
// whether the watches reach the API server right now. Scheduler calls read the model and never
// wait on the watch threads. Stop() (or the destructor) ends both threads promptly.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "extender/apiclient/api_client.h"
#include "extender/apiclient/api_writer.h"
#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/dra_stores.h"
#include "extender/apiclient/object_stores.h"
#include "extender/apiclient/reflector.h"

namespace topofit::apiclient {

inline constexpr const char* kLivePodFieldSelector = "status.phase!=Succeeded,status.phase!=Failed";

struct LiveOptions {
  // Where the API server is: a kubeconfig path (with an optional context), or in-cluster.
  std::string kubeconfig;
  std::string context;
  bool in_cluster = false;
  std::string secrets_dir = kServiceAccountDir;  // In-cluster service account mount.

  ApiClientOptions api;
  WatchTimings watch;  // Both watches' (tests shorten them).
  bool watch_dra = true;  // Watch DeviceClasses, ResourceSlices and ResourceClaims.
  LogFn log;  // nullptr: stderr.
  // Called once, from a watch thread, when ready() turns true (e.g. the server's SetReady).
  std::function<void()> on_ready;
  // Called from a watch thread each time the watch of `kind` ("nodes", "pods") connects or loses
  // its connection (Reflector::connected()), e.g. the server's topofit_watch_connected gauge.
  std::function<void(const std::string& kind, bool connected)> on_watch_state;
};

// A watch's ReflectorOptions from LiveOptions: its timings, page size, log (prefixed "watch KIND: ")
// and on_watch_state.
ReflectorOptions WatchOptions(const LiveOptions& options, const char* kind, const char* path, const char* selector);
// The ClusterConfig LiveOptions point at (kubeconfig file or in-cluster).
Result<ClusterConfig> ResolveClusterConfig(const LiveOptions& options);
// A client for that API server, to share between the LiveCluster and the bind path's ApiWriter.
Result<std::shared_ptr<ApiClient>> ConnectApi(const LiveOptions& options);

class LiveCluster {
 public:
  // Connects lazily: Start() returns once the threads run; errors here are configuration errors
  // (unreadable kubeconfig, bad PEM). API server failures are retried by the threads.
  static Result<std::unique_ptr<LiveCluster>> Start(const LiveOptions& options, ClusterSink& sink);
  // Same with a client from ConnectApi(), owning the sink (an adapter such as ModelSink).
  static std::unique_ptr<LiveCluster> Start(const LiveOptions& options, std::shared_ptr<ApiClient> api,
                                            std::unique_ptr<ClusterSink> sink);
  ~LiveCluster();

  bool ready() const { return nodes_->synced() && pods_->synced(); }
  // Both watches have a working connection now (unlike ready(), this goes back to false).
  bool connected() const { return nodes_->connected() && pods_->connected(); }
  void Stop();

  ApiClient& api() { return *api_; }
  ApiWriter& writer() { return writer_; }
  const Reflector& node_reflector() const { return *nodes_; }
  const Reflector& pod_reflector() const { return *pods_; }

 private:
  LiveCluster(std::shared_ptr<ApiClient> api, ClusterSink& sink, std::unique_ptr<ClusterSink> owned,
              const LiveOptions& options);
  void Launch();
  void OnSynced();


  std::unique_ptr<ClusterSink> owned_sink_;  // Before the stores: outlives the threads using it.
  std::shared_ptr<ApiClient> api_;
  ApiWriter writer_;
  std::function<void()> on_ready_;
  std::atomic<bool> ready_fired_{false};
  NodeStore node_store_;
  PodStore pod_store_;
  std::vector<std::unique_ptr<DraStore>> dra_stores_;
  std::unique_ptr<Reflector> nodes_;
  std::unique_ptr<Reflector> pods_;
  std::vector<std::unique_ptr<Reflector>> dra_;
};

}  // namespace topofit::apiclient
