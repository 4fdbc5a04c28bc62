#pragma once
// TopoParseError: the one shape of every error ParseTopoMatrix returns (topo_parser.h):
//   "line L, column C: expected <what was expected>, got <what the text has>"
// Lines and columns are 1-based and count the text after terminal escapes are removed. Building the
// message never fails.

#include <string>

#include <fmt/format.h>

#include "base/status.h"

namespace topofit {

inline Error TopoParseError(int line, int column, const std::string& what) {
  return Error{fmt::format("line {}, column {}: {}", line, column, what)};
}

}  // namespace topofit
