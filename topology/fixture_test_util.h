#pragma once
// Tests only: the real `nvidia-smi topo -m` outputs under TOPOFIT_FIXTURES_DIR/topo (shared/fixtures),
// read and parsed with doctest checks, so every test file loads them the same way.

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "topology/topo_parser.h"

namespace topofit::testing {

// The fixture's text, byte for byte; fails the test when the file is missing.
inline std::string ReadTopoFixture(const std::string& name) {
  std::ifstream in(std::string(TOPOFIT_FIXTURES_DIR) + "/topo/" + name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fixture parsed; fails the test when it does not parse.
inline TopoMatrix ParseTopoFixture(const std::string& name) {
  Result<TopoMatrix> m = ParseTopoMatrix(ReadTopoFixture(name));
  REQUIRE_MESSAGE(m.ok(), name << ": " << (m.ok() ? "" : m.error()));
  return *m;
}

}  // namespace topofit::testing
