#pragma once
// ServeConfig: what `topofit serve` can be told by a --config YAML file (and its flags), and the file's
// reader. Each key is declared once, with its flag, default and meaning, in serve_settings.cc's table
// (the README's "Settings of `topofit serve`" lists it); nested keys are mappings:
//
//   listen: 0.0.0.0:8888
//   opsListen: 0.0.0.0:8889
//   reservationTTL: 30s            # or a number of seconds
//   scoring:
//     weights: {SetQuality: 1, FragmentationGradient: 1}
//     requestMix: [{size: 1, weight: 1}, {size: 2, weight: 1}, {size: 4, weight: 1}, {size: 8, weight: 1}]
//
// Unknown keys are errors (a typo must not silently keep a default). Never throws.

#include <string>

#include "base/status.h"
#include "extender/cluster/cluster_model.h"
#include "extender/groups/network_domains.h"
#include "extender/placement/pipeline_config.h"
#include "extender/server/extender_verbs.h"
#include "extender/server/http_server.h"

namespace topofit::server {

struct ServeConfig {
  ServerOptions server;
  cluster::ModelOptions model;
  placement::PipelineConfig pipeline;
  // The network levels groups of pods are placed over (extender/groups/network_domains.h), broadest first.
  groups::DomainLevels group_levels = groups::DomainLevels::Defaults();
  // Which binds also write a GPUsAssigned Event (ExtenderVerbs::SetBindEvents).
  BindEvents bind_events = BindEvents::kNotable;
  // Pods of no group ordered by the domain loss in their best band (groups/domain_loss.h).
  bool domain_loss = true;
};

// Splits "ADDR:PORT" (ADDR may be empty for all interfaces, or [v6]).
Status ParseListen(const std::string& listen, ServerOptions& out);
// "ADDR:PORT" into out.ops_host/ops_port; "" turns the separate ops listener off.
Status ParseOpsListen(const std::string& listen, ServerOptions& out);
// Applies the YAML text on top of `config`.
Status ApplyConfigYaml(const std::string& yaml, ServeConfig& config);
Status ApplyConfigFile(const std::string& path, ServeConfig& config);

}  // namespace topofit::server
