#include "extender/node/plugin/node_command.h"

#include <cstdlib>
#include <memory>
#include <vector>

#include "base/log.h"
#include "extender/node/plugin/node_settings.h"
#include "extender/server/ops_listener.h"

namespace topofit::node {
namespace {

// The ops endpoints over the service's State(), on options.ops_listen.
OpsServer ServeOps(const std::string& listen) {
  return [listen](const NodeService& service) -> Result<std::function<void()>> {
    server::OpsHandlers handlers;
    auto probe = [](const Probe& p) { return server::OpsProbe{p.ok, p.body}; };
    handlers.live = [&service, probe] { return probe(Liveness(service.State())); };
    handlers.ready = [&service, probe] { return probe(Readiness(service.State())); };
    handlers.metrics = [&service] { return RenderNodeMetrics(service.State()); };
    auto ops = std::make_shared<server::OpsListener>(std::move(handlers));
    Status st = ops->Start(listen);
    if (!st.ok()) return Error(st.error());
    Log(LogLevel::kInfo, "ops endpoints serving",
        {{"ops", listen.substr(0, listen.rfind(':')) + ":" + std::to_string(ops->port())},
         {"paths", "/healthz /readyz /metrics"}});
    return std::function<void()>([ops] { ops->Stop(); });
  };
}

// Every setting from its flag's text (`texts`, one per row of NodeSettings()), the node name from
// $NODE_NAME when none was given; the first bad setting's error.
Status ApplySettings(const std::vector<std::string>& texts, NodeOptions& o) {
  Status bad = Status::Ok();
  for (size_t i = 0; i < texts.size(); ++i) {
    Status st = ApplySetting(NodeSettings()[i], texts[i], o);
    if (!st.ok() && bad.ok()) bad = st;
  }
  if (o.node_name.empty()) {
    if (const char* env = std::getenv("NODE_NAME")) o.node_name = env;
  }
  return bad;
}

}  // namespace

std::function<int()> SetupNodeCommand(CLI::App& sub, std::function<Result<NodeRunHooks>(const NodeOptions&)> hooks) {
  auto texts = std::make_shared<std::vector<std::string>>();
  for (const NodeSetting& row : NodeSettings()) texts->push_back(row.default_text);
  for (size_t i = 0; i < texts->size(); ++i) {
    const NodeSetting& row = NodeSettings()[i];
    CLI::Option* flag = sub.add_option(row.flag, (*texts)[i], row.help);
    if (*row.default_text) flag->capture_default_str();
  }
  return [texts, hooks] {
    NodeOptions o;
    Status settings = ApplySettings(*texts, o);
    if (o.node_name.empty()) return Log(LogLevel::kError, "no node name: pass --node-name or set NODE_NAME"), 2;
    if (!settings.ok()) return Log(LogLevel::kError, "bad flag", {{"error", settings.error()}}), 2;
    NodeRunHooks extra;
    if (hooks) {
      auto h = hooks(o);
      if (!h.ok()) return Log(LogLevel::kError, "cannot start", {{"error", h.error()}}), 1;
      extra = std::move(*h);
    }
    return RunNodeService(o, o.ops_listen.empty() ? nullptr : ServeOps(o.ops_listen), std::move(extra));
  };
}

}  // namespace topofit::node
