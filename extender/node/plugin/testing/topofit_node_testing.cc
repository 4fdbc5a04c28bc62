// topofit-node-testing: `topofit node` with its test hooks, for the tests alone - built from the
// same libraries, never shipped (the image builds the `topofit` target only). Its command line is
// `topofit node`'s (node_command.h) - `topofit-node-testing [--log-format F] [--log-level L] node
// FLAGS...` - with three flags more:
//   --fake-backend TOPO_FILE  the fake NVIDIA plugin (fake_backend.h) with the GPUs of this
//                             `nvidia-smi topo -m` file runs inside the process: served on
//                             --fake-backend-socket, registered to topofit's registrar; no topology
//                             publishing then
//   --fake-backend-socket     its socket (file name in --device-plugin-dir)
//   --pods-file FILE          pods and plans from this JSON file (a PodList or an array of pods,
//                             re-read when it changes) instead of the API server
// The CLI tests (extender/cli/*_test.cc), test/deploy/manifests-test.sh and the e2e suite
// ($TOPOFIT_NODE_BINARY) run it.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "base/files.h"
#include "base/log.h"
#include "extender/node/plugin/grpc_util.h"
#include "extender/node/plugin/node_command.h"
#include "extender/node/plugin/testing/fake_backend.h"

namespace topofit::node {
namespace {

struct TestFlags {
  std::string fake_backend_topo;
  std::string fake_backend_socket = "topofit-fake-gpu.sock";
  std::string pods_file;
};

void AddTestFlags(CLI::App& sub, TestFlags& flags) {
  sub.add_option("--fake-backend", flags.fake_backend_topo,
                 "Run the built-in fake backend from this `nvidia-smi topo -m` file (tests, demo; fake UUIDs)");
  sub.add_option("--fake-backend-socket", flags.fake_backend_socket,
                 "The fake backend's socket (file name in --device-plugin-dir)")
      ->capture_default_str();
  sub.add_option("--pods-file", flags.pods_file,
                 "Read pods and their plans from this JSON file (PodList or array; re-read on change) "
                 "instead of the API server");
}

Result<NodeRunHooks> Hooks(const TestFlags& flags, const NodeOptions& options) {
  NodeRunHooks hooks;
  hooks.pods_file = flags.pods_file;
  if (flags.fake_backend_topo.empty()) return hooks;
  auto text = ReadFile(flags.fake_backend_topo);
  if (!text) return Error{"--fake-backend: " + text.error()};
  auto fake = FakeBackend::FromTopo(*text);
  if (!fake) return Error{fake.error()};
  hooks.backend = InProcessBackend(std::move(*fake), JoinPath(options.device_plugin_dir, flags.fake_backend_socket));
  return hooks;
}

}  // namespace
}  // namespace topofit::node

int main(int argc, char** argv) {
  using namespace topofit;
  std::signal(SIGPIPE, SIG_IGN);  // As `topofit` does: a peer gone is an EPIPE, not the end.
  CLI::App app{"topofit-node-testing: `topofit node` with its test hooks (tests only)"};
  app.require_subcommand(1, 1);
  std::string log_format = "logfmt", log_level = "info";
  app.add_option("--log-format", log_format, "Log lines as logfmt or json")->capture_default_str();
  app.add_option("--log-level", log_level, "Lowest level logged: debug, info, warn or error")->capture_default_str();
  CLI::App* sub = app.add_subcommand("node", "`topofit node`, with --fake-backend and --pods-file");
  sub->fallthrough();
  auto flags = std::make_shared<node::TestFlags>();
  auto run = node::SetupNodeCommand(*sub, [flags](const node::NodeOptions& o) { return node::Hooks(*flags, o); });
  node::AddTestFlags(*sub, *flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (Status logging = ConfigureLog(log_format, log_level); !logging.ok()) {
    std::fprintf(stderr, "topofit-node-testing: %s\n", logging.error().c_str());
    return 2;
  }
  return run();
}
