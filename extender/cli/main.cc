// The `topofit` executable: one table of subcommands, and the options every subcommand shares.
#include <csignal>
#include <cstdio>
#include <map>
#include <string>

#include "base/log.h"
#include "extender/cli/command.h"

namespace topofit::cli {
namespace {

struct Command {
  const char* name;
  const char* description;
  CommandRun (*setup)(CLI::App& sub);
};

// In the order `topofit --help` lists them.
constexpr Command kCommands[] = {
    {"topo", "Show how topofit models a node: `nvidia-smi topo -m` output or a built-in profile", SetupTopo},
    {"serve", "Run the kube-scheduler extender (filter, prioritize, bind, preempt) over HTTP", SetupServe},
    {"bench", "Replay pod traces through topofit and baseline policies, side by side", SetupBench},
    {"node", "Interpose between kubelet and the NVIDIA device plugin: containers get topofit's planned GPUs; "
             "publish the node's GPU topology (DaemonSet)", SetupNode},
};

}  // namespace
}  // namespace topofit::cli

int main(int argc, char** argv) {
  using namespace topofit;
  using namespace topofit::cli;
  // A peer that goes away (an API server restarting under a kept-alive TLS connection, a client
  // closing mid-reply) must be an EPIPE for the writer to handle, not the end of the process:
  // OpenSSL writes with plain write(2).
  std::signal(SIGPIPE, SIG_IGN);
  // Installed as a kubectl plugin: a link named kubectl-topofit.
  const std::string self = argv[0];
  if (self.substr(self.rfind('/') + 1) == "kubectl-topofit") return RunKubectlPlugin(argc, argv);
  CLI::App app{"topofit: topology-aware GPU placement for Kubernetes (a kube-scheduler extender)"};
  app.require_subcommand(0, 1);
  bool version = false;
  std::string log_format = "logfmt", log_level = "info";
  app.add_flag("--version", version, "Print the version and git revision");
  app.add_option("--log-format", log_format, "Log lines as logfmt or json (every subcommand)")->capture_default_str();
  app.add_option("--log-level", log_level, "Lowest level logged: debug, info, warn or error")->capture_default_str();

  std::map<CLI::App*, CommandRun> runs;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    sub->fallthrough();  // `topofit serve --log-format json` as well as `topofit --log-format json serve`.
    runs[sub] = c.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (version) {
    std::printf("topofit %s (git %s)\n", TOPOFIT_VERSION, TOPOFIT_GIT_REVISION);
    return 0;
  }
  if (Status logging = ConfigureLog(log_format, log_level); !logging.ok()) {
    std::fprintf(stderr, "topofit: %s\n", logging.error().c_str());
    return 2;
  }
  for (auto& [sub, run] : runs) {
    if (sub->parsed()) return run();
  }
  std::fputs(app.help().c_str(), stdout);
  return 0;
}
