#pragma once
// RunCommand: runs a program (no shell) and captures its standard output, bounded in time.
//
// Returns the stdout text when the program exits 0. Any other outcome is an Error that says what
// happened: cannot start ("cannot run 'nvidia-smi': No such file or directory"), exit status or
// signal with the first line of stderr, or the timeout (the child is killed). Never throws.

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace topofit::node {

Result<std::string> RunCommand(const std::vector<std::string>& argv,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace topofit::node
