#include "base/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace topofit {

Result<std::string> ReadFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool failed = std::ferror(f);
  const int err = errno;
  std::fclose(f);
  if (failed) return Error{"cannot read " + path + ": " + std::strerror(err)};
  return out;
}

}  // namespace topofit
