#pragma once
// The `topofit node` command line, shared by `topofit node` (extender/cli/node_command.cc) and its
// test build topofit-node-testing (testing/topofit_node_testing.cc): one CLI11 flag per row of the
// settings table (node_settings.h), then the run - the node name from $NODE_NAME when --node-name is
// not given, every setting applied (a bad one: exit 2), the ops endpoints on --ops-listen when it names
// an address (node_ops.h over extender/server/ops_listener.h), and RunNodeService (node_run.h).
// Exit status: 0 after SIGTERM or SIGINT, 1 when it cannot start, 2 on bad settings.

#include <CLI/CLI.hpp>

#include <functional>

#include "base/status.h"
#include "extender/node/plugin/node_run.h"

namespace topofit::node {

// Adds the settings' flags to `sub` and returns what runs the command. `hooks`, when given, is asked
// once the settings are checked, for what the test build adds; its error ends the run (exit 1).
std::function<int()> SetupNodeCommand(CLI::App& sub,
                                      std::function<Result<NodeRunHooks>(const NodeOptions&)> hooks = nullptr);

}  // namespace topofit::node
