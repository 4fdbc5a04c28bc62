#pragma once
// The subcommands of the `topofit` executable. main.cc's kCommands table lists them, one row each;
// adding a subcommand is a file with its Setup function and a row in that table.
//
// A Setup adds the command's options to the CLI11 subcommand it is given and returns the function
// that runs the command. Exit status: 0 success, 1 runtime failure, 2 bad input or usage.
// Diagnostics go through the logger (base/log.h); results go to stdout.

#include <CLI/CLI.hpp>

#include <functional>

namespace topofit::cli {

using CommandRun = std::function<int()>;

CommandRun SetupTopo(CLI::App& sub);   // topo_command.cc
CommandRun SetupServe(CLI::App& sub);  // serve_command.cc
CommandRun SetupBench(CLI::App& sub);  // bench_command.cc
CommandRun SetupNode(CLI::App& sub);   // node_command.cc

// The whole program when it runs as `kubectl-topofit` (kubectl_plugin.cc).
int RunKubectlPlugin(int argc, char** argv);

}  // namespace topofit::cli
