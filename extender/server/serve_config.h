#pragma once
// ServeConfig: everything `topofit serve` can be told, from --config YAML and then flags.
//
//   listen: 0.0.0.0:8888
//   opsListen: 0.0.0.0:8889        # optional: health, metrics, /api/v1 on their own listener
//   urlPrefix: /scheduler
//   maxBodyBytes: 67108864
//   threads: 32
//   tlsCertFile: /etc/topofit/tls/tls.crt      # HTTPS on listen (tls_credentials.h); with tlsPrivateKeyFile
//   tlsPrivateKeyFile: /etc/topofit/tls/tls.key
//   clientCAFile: /etc/topofit/tls/client-ca.crt   # optional: require a client certificate from this CA
//   tlsReloadInterval: 10s                     # how often the three files are looked at for changes
//   reservationTTL: 30s            # or a number of seconds
//   filterKeepsBest: false         # true: filter passes only the best-scored nodes (run without prioritizeVerb)
//   scoring:
//     weights: {SetQuality: 1, FragmentationGradient: 1}   (the default; Packing, Fragmentation,
//              Stranding are the older parts, off unless named)
//     levels: relative            (or absolute: pipeline_config.h)
//     tieBreak: fit-then-pack     (or pack, none: which nodes of the best band get 10, tie_break.h)
//     workloadHalfLife: 2000      (pods; the workload estimate's decay, workload_estimate.h)
//     podsWithoutGpus: false      (true: the prioritize verb scores GPU-less pods too, pipeline_config.h;
//                                  the prioritize-pods-without-gpus verb, manifests' second extender
//                                  entry, scores them whatever this says; the bench reads it too)
//     requestMix: [{size: 1, weight: 1}, {size: 2, weight: 1}, {size: 4, weight: 1}, {size: 8, weight: 1}]
// Unknown keys are errors (a typo must not silently keep a default). Never throws.

#include <string>

#include "base/status.h"
#include "extender/cluster/cluster_model.h"
#include "extender/placement/pipeline_config.h"
#include "extender/server/http_server.h"

namespace topofit::server {

struct ServeConfig {
  ServerOptions server;
  cluster::ModelOptions model;
  placement::PipelineConfig pipeline;
};

// Splits "ADDR:PORT" (ADDR may be empty for all interfaces, or [v6]).
Status ParseListen(const std::string& listen, ServerOptions& out);
// "ADDR:PORT" into out.ops_host/ops_port; "" turns the separate ops listener off.
Status ParseOpsListen(const std::string& listen, ServerOptions& out);
// Applies the YAML text on top of `config`.
Status ApplyConfigYaml(const std::string& yaml, ServeConfig& config);
Status ApplyConfigFile(const std::string& path, ServeConfig& config);

}  // namespace topofit::server
