#include "extender/server/extender_app.h"

namespace topofit::server {

Result<std::unique_ptr<ExtenderApp>> ExtenderApp::Create(const ServeConfig& config, const std::string& record_path,
                                                          std::unique_ptr<k8s::KubeWriter> writer, bool log_decisions) {
  Status valid = model::Pipeline::Validate(config.pipeline);
  if (!valid.ok()) return Error{valid.error()};
  std::unique_ptr<ExtenderApp> app(new ExtenderApp());
  app->model_ = std::make_unique<model::ClusterModel>(config.model);
  app->pipeline_ = std::make_unique<model::Pipeline>(app->model_.get(), config.pipeline);
  app->writer_ = writer ? std::move(writer) : std::make_unique<k8s::InMemoryKubeWriter>();
  app->metrics_ = std::make_unique<Metrics>();
  if (!record_path.empty()) {
    auto rec = Recorder::Open(record_path);
    if (!rec) return Error{rec.error()};
    app->recorder_ = std::move(*rec);
  }
  app->verbs_ = std::make_unique<ExtenderVerbs>(app->pipeline_.get(), app->writer_.get(), app->metrics_.get(),
                                                app->recorder_.get(), log_decisions);
  app->query_ = std::make_unique<QueryApi>(app->pipeline_.get());
  std::shared_ptr<TlsCredentials> tls;
  if (config.server.tls.enabled()) {
    auto loaded = TlsCredentials::Load(config.server.tls, config.server.tls_reload_interval);
    if (!loaded) return Error{loaded.error()};
    tls = *loaded;
  }
  app->server_ = std::make_unique<ExtenderServer>(config.server, app->verbs_.get(), app->query_.get(),
                                                  app->metrics_.get(), app->model_.get(), std::move(tls));
  return app;
}

void ExtenderApp::Load(const k8s::Snapshot& snapshot) {
  for (const auto& node : snapshot.nodes) model_->ApplyNode(node);
  for (const auto& pod : snapshot.pods) model_->ApplyPod(pod);
  verbs_->SetLearnNodes(true);  // No watch in snapshot mode: full-node requests may name new nodes.
  server_->SetReady(true);
}

}  // namespace topofit::server
