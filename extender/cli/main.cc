// The `topofit` executable: dispatches to the self-registered subcommands (topo, serve, bench, agent).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>

#include "extender/cli/command.h"

namespace topofit::cli {

std::vector<CommandSpec>& Commands() {
  static std::vector<CommandSpec> commands;
  return commands;
}

}  // namespace topofit::cli

int main(int argc, char** argv) {
  using namespace topofit::cli;
  // A peer that goes away (an API server restarting under a kept-alive TLS connection, a client
  // closing mid-reply) must be an EPIPE for the writer to handle, not the end of the process:
  // OpenSSL writes with plain write(2).
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"topofit: topology-aware GPU placement for Kubernetes (a kube-scheduler extender)"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version and git revision");

  auto& commands = Commands();
  std::sort(commands.begin(), commands.end(),
            [](const CommandSpec& a, const CommandSpec& b) { return a.order < b.order; });
  std::map<CLI::App*, CommandRun> runs;
  for (auto& spec : commands) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.description);
    runs[sub] = spec.setup(*sub);
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
  for (auto& [sub, run] : runs) {
    if (sub->parsed()) return run();
  }
  std::fputs(app.help().c_str(), stdout);
  return 0;
}
