#pragma once
// The settings of `topofit node`, each declared once, one row each: its key (the NodeOptions member it
// sets), its flag, its default (as the flag's text) and its help. `topofit node` and its test build
// (topofit-node-testing) add one flag per row, in the table's order (node_command.h), and
// NodeOptions() applies the defaults, so the flags, their --help and the struct cannot drift apart.
//   text settings      the flag's text as is;
//   duration settings  a base/duration.h text ("150ms", "2s", "5m"), at least 1ms.
// A row whose default is empty shows none in --help.

#include <chrono>
#include <span>
#include <string>

#include "base/status.h"
#include "extender/node/plugin/node_options.h"

namespace topofit::node {

struct NodeSetting {
  const char* flag;
  std::string NodeOptions::*text = nullptr;                    // The member of a text setting, or
  std::chrono::milliseconds NodeOptions::*duration = nullptr;  // of a duration setting.
  const char* default_text = "";
  const char* help = "";
};

std::span<const NodeSetting> NodeSettings();

// Sets the row's member of `options` from `text`. Errors (durations only): "<flag>: <why>".
Status ApplySetting(const NodeSetting& row, const std::string& text, NodeOptions& options);

}  // namespace topofit::node
