#include "base/files.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace topofit {

TEST_CASE("ReadFile returns every byte, an empty file as empty, and says why it cannot read") {
  char path[] = "/tmp/topofit-files-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::string bytes("a\r\n\0b", 5);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
  close(fd);
  auto r = ReadFile(path);
  REQUIRE(r.ok());
  CHECK(*r == bytes);

  REQUIRE(truncate(path, 0) == 0);
  auto empty = ReadFile(path);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  std::remove(path);

  auto missing = ReadFile(path);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() == std::string("cannot open ") + path + ": No such file or directory");

  auto dir = ReadFile("/tmp");
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().starts_with("cannot read /tmp: "));
}

}  // namespace topofit
