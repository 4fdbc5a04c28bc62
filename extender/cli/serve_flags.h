#pragma once
// ServeFlags: the command line of `topofit serve`, one flag per row of the settings table that has
// one (extender/server/serve_settings.h), added to its CLI11 subcommand with the row's help, value
// and default; the settings only a --config file sets are listed in the help's footer. Given() lists
// the flags given, for ResolveServeSettings.
//
// Contract: a flag's text is kept as given and read by its row, not by CLI11, so that a flag and its
// config key read alike; a switch (--filter-keeps-best) gives "true", or what follows `=`
// ("--filter-keeps-best=false"). Bind once per subcommand; the object must outlive the parse.

#include <CLI/CLI.hpp>

#include <deque>
#include <string>
#include <vector>

#include "extender/server/serve_settings.h"

namespace topofit::cli {

class ServeFlags {
 public:
  explicit ServeFlags(CLI::App& sub);
  ServeFlags(const ServeFlags&) = delete;
  ServeFlags& operator=(const ServeFlags&) = delete;

  // The flags given on the command line, in the table's order.
  std::vector<server::GivenFlag> Given() const;

 private:
  struct Bound {
    const server::ServeSetting* setting = nullptr;
    CLI::Option* option = nullptr;
    std::string text;  // A value flag's text.
    bool on = false;   // A switch.
  };
  std::deque<Bound> bound_;  // CLI11 writes into its elements: they must not move.
};

// The footer of `topofit serve --help`: the settings that only a --config file sets, with their defaults.
std::string ConfigOnlyHelp();

}  // namespace topofit::cli
