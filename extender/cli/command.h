#pragma once
// Subcommands of the `topofit` executable register themselves here, so adding one is adding a file.
//
// A command file defines one static CommandRegistration. Its Setup adds the command's options to the
// CLI11 subcommand it is given and returns the function that runs the command (exit status:
// 0 success, 1 runtime failure, 2 bad input or usage). Setup runs once, at start-up, in `order`.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace topofit::cli {

using CommandRun = std::function<int()>;
using CommandSetup = std::function<CommandRun(CLI::App& sub)>;

struct CommandSpec {
  std::string name;
  std::string description;
  int order;
  CommandSetup setup;
};

std::vector<CommandSpec>& Commands();

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, int order, CommandSetup setup) {
    Commands().push_back({std::move(name), std::move(description), order, std::move(setup)});
  }
};

}  // namespace topofit::cli
