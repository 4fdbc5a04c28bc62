#pragma once
// Tests only: the real `nvidia-smi topo -m` outputs under TOPOFIT_FIXTURES_DIR/topo (shared/fixtures)
// and under topology/testdata/topo in this repository (sources in its SOURCES.md), read and parsed
// with doctest checks, so every test file loads and parses them the same way.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/files.h"
#include "topology/topo_parser.h"

namespace topofit::testing {

// The fixture's text, byte for byte; fails the test when the file is missing.
inline std::string ReadTopoFixture(const std::string& name) {
  Result<std::string> text = ReadFile(std::string(TOPOFIT_FIXTURES_DIR) + "/topo/" + name);
  REQUIRE_MESSAGE(text.ok(), "missing fixture " << name << ": " << (text.ok() ? "" : text.error()));
  return *text;
}

// `text` parsed; fails the test when it does not parse.
inline TopoMatrix ParseOk(const std::string& text) {
  Result<TopoMatrix> m = ParseTopoMatrix(text);
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error()));
  return *m;
}

// The parser's error for `text`; fails the test when it parses.
inline std::string ParseError(const std::string& text) {
  Result<TopoMatrix> m = ParseTopoMatrix(text);
  REQUIRE_MESSAGE(!m.ok(), "parse unexpectedly succeeded");
  return m.error();
}

// A link of a parsed matrix as nvidia-smi prints it.
inline std::string Cell(const std::vector<std::vector<Link>>& links, int a, int b) { return ToString(links[a][b]); }

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
