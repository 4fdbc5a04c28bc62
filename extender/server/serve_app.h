#pragma once
// ServeApp: one running extender assembled from its parts - model, pipeline, KubeWriter, metrics,
// recorder, the PodGroups and the groups' coordinator, verbs, query API and HTTP server - in the order
// they depend on each other. Used by `topofit serve`, by the server tests and by the latency bench, so
// all three run the same thing.
// Groups are found by groups::PodGroupLookup: a pod's Workload API or coscheduling PodGroup in
// pod_groups() (fed by the watches, apiclient/pod_group_watch.h, or a snapshot's PodGroups), else
// topofit's annotations. When a PodGroup arrives or changes, the members the model has seen pending
// are requeued (KubeWriter::RequeuePod): they were held waiting for it.

#include <memory>
#include <string>

#include "extender/k8s/kube_writer.h"
#include "extender/k8s/snapshot.h"
#include "extender/cluster/cluster_model.h"
#include "extender/cluster/dra_cluster.h"
#include "extender/cluster/pod_group_store.h"
#include "extender/placement/pipeline.h"
#include "extender/server/extender_verbs.h"
#include "extender/server/http_server.h"
#include "extender/server/metrics.h"
#include "extender/server/query_api.h"
#include "extender/server/recorder.h"
#include "extender/server/serve_config.h"

namespace topofit::server {

class ServeApp {
 public:
  // writer: null means an InMemoryKubeWriter owned by the app. record_path: "" for none.
  static Result<std::unique_ptr<ServeApp>> Create(const ServeConfig& config, const std::string& record_path = "",
                                                     std::unique_ptr<k8s::KubeWriter> writer = nullptr,
                                                     bool log_decisions = true);

  // Applies every node, then every pod, of a snapshot to the model (and its DeviceClasses,
  // ResourceSlices and ResourceClaims, through dra(), before the pods), its PodGroups to pod_groups(),
  // and marks the server ready.
  void Load(const k8s::Snapshot& snapshot);
  // Streams a snapshot file into the model (k8s::StreamSnapshotFile: one item in memory at a time,
  // applied in the order of the file; a pod before its node waits in the model for it; PodGroups into
  // pod_groups()), then as Load. Returns how many nodes, pods and PodGroups it read; an Error leaves the
  // server not ready.
  struct Loaded {
    size_t nodes = 0, pods = 0, pod_groups = 0;
    size_t dra_objects = 0;  // DeviceClasses, ResourceSlices and ResourceClaims.
  };
  Result<Loaded> LoadFile(const std::string& path);

  // Snapshot mode's DELETE /api/v1/pods/NS/NAME (set by Load): the pod's holding leaves the model
  // (its GPUs are free) and the in-memory writer forgets its bind. 404 when neither knew it.
  Reply DeletePod(std::string_view ns, std::string_view name);

  cluster::ClusterModel& model() { return *model_; }
  // What DRA says about GPUs (docs/dra.md), fed by Load/LoadFile or the live watch (StartLiveCluster).
  cluster::DraCluster& dra() { return *dra_; }
  placement::Pipeline& pipeline() { return *pipeline_; }
  ExtenderVerbs& verbs() { return *verbs_; }
  Metrics& metrics() { return *metrics_; }
  HttpServer& server() { return *server_; }
  k8s::KubeWriter& writer() { return *writer_; }
  groups::GroupCoordinator& groups() { return *groups_; }
  cluster::PodGroupStore& pod_groups() { return *pod_groups_; }

 private:
  ServeApp() = default;
  std::unique_ptr<cluster::ClusterModel> model_;
  std::unique_ptr<cluster::DraCluster> dra_;
  std::unique_ptr<placement::Pipeline> pipeline_;
  std::unique_ptr<k8s::KubeWriter> writer_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<Recorder> recorder_;
  // The members of a PodGroup put (new or changed), pending, asked to be tried again.
  void RequeueMembers(const k8s::PodGroupObject& group);

  std::unique_ptr<cluster::PodGroupStore> pod_groups_;
  std::unique_ptr<groups::GroupLookup> group_lookup_;
  std::unique_ptr<groups::GroupCoordinator> groups_;
  std::unique_ptr<ExtenderVerbs> verbs_;
  std::unique_ptr<QueryApi> query_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace topofit::server
