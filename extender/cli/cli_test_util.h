#pragma once
// Test helpers that run the built `topofit` binary (TOPOFIT_BINARY) through the shell and capture
// its exit status, stdout and stderr.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/files.h"

namespace topofit::cli::testing {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

// A fresh file name under TMPDIR (the file exists and is empty).
inline std::string TempPath(const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/topofit-cli-XXXXXX" + suffix;
  int fd = mkstemps(tmpl.data(), static_cast<int>(std::string(suffix).size()));
  REQUIRE(fd >= 0);
  close(fd);
  return tmpl;
}

// Runs `<prefix> topofit <args>` through the shell (trusted test strings), capturing stdout and stderr.
inline Run Topofit(const std::string& args, const std::string& prefix = "") {
  std::string err_path = TempPath(".err");
  std::string cmd = prefix + " '" + TOPOFIT_BINARY + "' " + args + " 2>'" + err_path + "'";
  Run r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto err = ReadFile(err_path);
  r.err = err.ok() ? *err : err.error();
  std::remove(err_path.c_str());
  return r;
}

}  // namespace topofit::cli::testing
