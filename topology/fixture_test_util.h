#pragma once
// Tests only: the real `nvidia-smi topo -m` outputs under TOPOFIT_FIXTURES_DIR/topo (shared/fixtures)
// and under topology/testdata/topo in this repository (sources in its SOURCES.md), read and parsed
// with doctest checks, so every test file loads them the same way.

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/files.h"
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

// Path of a fixture under topology/testdata/topo in this repository.
inline std::string RepoTopoFixturePath(const std::string& name) {
  return std::string(TOPOFIT_SOURCE_DIR) + "/topology/testdata/topo/" + name;
}

// That fixture's text, byte for byte; fails the test when the file is missing.
inline std::string ReadRepoTopoFixture(const std::string& name) {
  Result<std::string> text = ReadFile(RepoTopoFixturePath(name));
  REQUIRE_MESSAGE(text.ok(), (text.ok() ? "" : text.error()));
  return *text;
}

}  // namespace topofit::testing
