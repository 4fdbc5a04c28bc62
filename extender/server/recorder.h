#pragma once
// Recorder: `--record FILE` - appends every verb request and reply as one JSON line,
//   {"ts":1732240000.123456,"verb":"filter","status":200,"request":{...},"response":{...}}
// so the bench can replay real traffic. Request bodies that are not JSON are stored as a string
// (key "request_text") so that every line stays valid JSON. Thread-safe; a line is written whole.

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace topofit::server {

class Recorder {
 public:
  static Result<std::unique_ptr<Recorder>> Open(const std::string& path);
  ~Recorder();

  void Record(std::string_view verb, std::string_view request, bool request_is_json, int status,
              std::string_view response);

 private:
  explicit Recorder(std::FILE* file) : file_(file) {}
  std::mutex mu_;
  std::FILE* file_;
};

}  // namespace topofit::server
