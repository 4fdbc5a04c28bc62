#include "base/files.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "test/util/temp_dir.h"

namespace topofit {

TEST_CASE("ReadFile returns every byte, an empty file as empty, and says why it cannot read") {
  testing::TempDir tmp;
  std::string bytes("a\r\n\0b", 5);
  const std::string path = tmp.Write("bytes", bytes);
  auto r = ReadFile(path);
  REQUIRE(r.ok());
  CHECK(*r == bytes);

  REQUIRE(truncate(path.c_str(), 0) == 0);
  auto empty = ReadFile(path);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  std::remove(path.c_str());

  auto missing = ReadFile(path);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() == "cannot open " + path + ": No such file or directory");

  auto dir = ReadFile(tmp.path());
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().starts_with("cannot read " + tmp.path() + ": "));
}

}  // namespace topofit
