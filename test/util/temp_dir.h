#pragma once
// TempDir: a fresh directory for one test's files, removed with everything in it when the object
// goes: the one way the tests (and the load benches) make temporary paths. Header-only.
//
//   testing::TempDir dir;                                   // $TMPDIR/topofit-XXXXXX (else /tmp/...)
//   std::string config = dir.Write("serve.yaml", "threads: 4\n");
//   std::string log = dir.File("serve.log");                // a name in it, not created
//   testing::TempDir sockets("tfn", "/tmp");                // short, for unix socket paths
//
// Contract: the constructor throws std::runtime_error when the directory cannot be made (doctest
// reports it as the test's failure). Write replaces the file through a temporary and a rename (as a
// Secret volume or cert-manager does) and throws when it cannot. Removal errors are ignored.

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace topofit::testing {

class TempDir {
 public:
  // `prefix`-XXXXXX under `parent`; parent "": $TMPDIR, else /tmp.
  explicit TempDir(std::string_view prefix = "topofit", std::string_view parent = "") {
    std::string base(parent);
    if (base.empty()) {
      const char* tmpdir = std::getenv("TMPDIR");
      base = tmpdir && *tmpdir ? tmpdir : "/tmp";
    }
    std::string tmpl = base + "/" + std::string(prefix) + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("cannot make a directory " + tmpl + ": " + std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` in the directory.
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }
  // Writes `content` to `name` (replacing it whole) and returns its path.
  std::string Write(std::string_view name, std::string_view content) const {
    const std::string path = File(name), tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(content.data(), std::streamsize(content.size()));
      if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
    }
    std::filesystem::rename(tmp, path);
    return path;
  }

 private:
  std::string path_;
};

}  // namespace topofit::testing
