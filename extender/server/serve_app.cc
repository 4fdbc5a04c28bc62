#include "extender/server/serve_app.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/json_writer.h"
#include "extender/groups/pod_group_lookup.h"

namespace topofit::server {

namespace {

Metrics::GroupCounts CountGroups(const groups::GroupCoordinator& groups) {
  Metrics::GroupCounts counts;
  for (const groups::GroupStatus& g : groups.Groups()) {
    switch (g.state) {
      case groups::GroupState::kWaiting: {
        ++counts.waiting;
        counts.preempting += !g.preempting.empty();
        double& longest = g.complete() ? counts.longest_wait_for_room : counts.longest_wait_for_members;
        longest = std::max(longest, g.waiting_seconds);
        break;
      }
      case groups::GroupState::kPlanned: ++counts.planned; break;
      case groups::GroupState::kBound: ++counts.bound; break;
    }
  }
  return counts;
}

}  // namespace

Result<std::unique_ptr<ServeApp>> ServeApp::Create(const ServeConfig& config, const std::string& record_path,
                                                          std::unique_ptr<k8s::KubeWriter> writer, bool log_decisions) {
  Status valid = placement::Pipeline::Validate(config.pipeline);
  if (!valid.ok()) return Error{valid.error()};
  std::unique_ptr<ServeApp> app(new ServeApp());
  app->model_ = std::make_unique<cluster::ClusterModel>(config.model);
  app->dra_ = std::make_unique<cluster::DraCluster>(*app->model_);
  app->pipeline_ = std::make_unique<placement::Pipeline>(app->model_.get(), config.pipeline);
  app->writer_ = writer ? std::move(writer) : std::make_unique<k8s::InMemoryKubeWriter>();
  app->metrics_ = std::make_unique<Metrics>();
  if (!record_path.empty()) {
    auto rec = Recorder::Open(record_path);
    if (!rec) return Error{rec.error()};
    app->recorder_ = std::move(*rec);
  }
  if (Status levels = config.group_levels.Validate(); !levels.ok()) return Error{"groupLevels: " + levels.error()};
  app->pod_groups_ = std::make_unique<cluster::PodGroupStore>();
  app->pod_groups_->SetOnChange([a = app.get()](const k8s::PodGroupObject& g) { a->RequeueMembers(g); });
  app->group_lookup_ = std::make_unique<groups::PodGroupLookup>(config.group_levels, *app->pod_groups_);
  app->groups_ = std::make_unique<groups::GroupCoordinator>(*app->pipeline_, *app->group_lookup_);
  if (config.domain_loss) app->pipeline_->SetBandLoss(&app->groups_->domain_loss());  // Pods of no group keep the groups' domains.
  app->verbs_ = std::make_unique<ExtenderVerbs>(app->pipeline_.get(), app->writer_.get(), app->metrics_.get(),
                                                app->recorder_.get(), log_decisions);
  app->verbs_->SetDra(app->dra_.get());
  app->verbs_->SetGroups(app->groups_.get());
  app->verbs_->SetBindEvents(config.bind_events);
  app->metrics_->SetGroupCounts([groups = app->groups_.get()] { return CountGroups(*groups); });
  app->query_ = std::make_unique<QueryApi>(app->pipeline_.get(), app->groups_.get(), config.group_levels);
  std::shared_ptr<TlsCredentials> tls;
  if (config.server.tls.enabled()) {
    auto loaded = TlsCredentials::Load(config.server.tls, config.server.tls_reload_interval);
    if (!loaded) return Error{loaded.error()};
    tls = *loaded;
  }
  app->server_ = std::make_unique<HttpServer>(config.server, app->verbs_.get(), app->query_.get(),
                                                  app->metrics_.get(), app->model_.get(), std::move(tls));
  return app;
}

void ServeApp::Load(const k8s::Snapshot& snapshot) {
  for (const auto& node : snapshot.nodes) dra_->ApplyNode(node);
  for (const auto& c : snapshot.device_classes) dra_->ApplyDeviceClass(c);
  for (const auto& s : snapshot.resource_slices) dra_->ApplyResourceSlice(s);
  for (const auto& c : snapshot.resource_claims) dra_->ApplyResourceClaim(c);
  for (const auto& pod : snapshot.pods) model_->ApplyPod(dra_->Pod(pod));
  for (const auto& group : snapshot.pod_groups) pod_groups_->Put(group);
  verbs_->SetLearnNodes(true);  // No watch in snapshot mode: full-node requests may name new nodes.
  verbs_->SetDra(dra_.get(), std::chrono::milliseconds(0));  // No watch either to bring a claim: no wait.
  // No watch either to tell that a pod is gone: DELETE /api/v1/pods/NS/NAME does.
  server_->SetPodDeleter([this](std::string_view ns, std::string_view name) { return DeletePod(ns, name); });
  server_->SetReady(true);
}

Result<ServeApp::Loaded> ServeApp::LoadFile(const std::string& path) {
  Loaded n;
  k8s::SnapshotSink sink{[&](k8s::NodeObject&& node) {
                           dra_->ApplyNode(node);
                           ++n.nodes;
                         },
                         [&](k8s::PodObject&& pod) {
                           model_->ApplyPod(dra_->Pod(pod));
                           ++n.pods;
                         },
                         [&](k8s::DeviceClassObject&& c) {
                           dra_->ApplyDeviceClass(c);
                           ++n.dra_objects;
                         },
                         [&](k8s::ResourceSliceObject&& s) {
                           dra_->ApplyResourceSlice(s);
                           ++n.dra_objects;
                         },
                         [&](k8s::ResourceClaimObject&& c) {
                           dra_->ApplyResourceClaim(c);
                           ++n.dra_objects;
                         },
                         [&](k8s::PodGroupObject&& group) {
                           pod_groups_->Put(group);
                           ++n.pod_groups;
                         }};
  if (Status s = k8s::StreamSnapshotFile(path, sink); !s.ok()) return Error{s.error()};
  Load(k8s::Snapshot{});
  return n;
}

}  // namespace topofit::server

namespace topofit::server {

void ServeApp::RequeueMembers(const k8s::PodGroupObject& group) {
  for (const cluster::GroupMember& m : model_->group_members().Of(group.key())) {
    if (m.bound()) continue;
    writer_->RequeuePod(group.namespace_, m.name, m.uid);
    metrics_->CountRequeue();
  }
}

Reply ServeApp::DeletePod(std::string_view ns, std::string_view name) {
  auto pod = model_->PodByName(ns, name);
  if (pod) {
    dra_->ForgetPod(pod->uid);
    model_->DeletePod(pod->uid);
  }
  bool forgotten = false;
  if (auto* memory = dynamic_cast<k8s::InMemoryKubeWriter*>(writer_.get()))
    forgotten = memory->Forget(std::string(ns), std::string(name));
  if (!pod && !forgotten) return JsonErrorReply(404, fmt::format("pod {}/{} is not in the model", ns, name));
  std::string body = R"({"deleted":)";
  AppendJsonString(body, fmt::format("{}/{}", ns, name));
  body += R"(,"freedGpus":)" + std::to_string(pod ? pod->count : 0) + "}";
  Reply r;
  r.body = std::move(body);
  return r;
}

}  // namespace topofit::server
