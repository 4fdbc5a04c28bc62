#include "extender/server/recorder.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "base/json_writer.h"

namespace topofit::server {

Result<std::unique_ptr<Recorder>> Recorder::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (!f) return Error{fmt::format("--record {}: {}", path, std::strerror(errno))};
  return std::unique_ptr<Recorder>(new Recorder(f));
}

Recorder::~Recorder() { std::fclose(file_); }

void Recorder::Record(std::string_view verb, std::string_view request, bool request_is_json, int status,
                      std::string_view response) {
  double ts = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string line = fmt::format("{{\"ts\":{:.6f},\"verb\":\"{}\",\"status\":{},", ts, verb, status);
  if (request_is_json) {
    line += "\"request\":";
    // Newlines in valid JSON are whitespace outside strings (inside they must be escaped), so
    // flattening a pretty-printed body keeps it the same JSON on one line.
    size_t at = line.size();
    line += request;
    for (size_t i = at; i < line.size(); ++i)
      if (line[i] == '\n' || line[i] == '\r') line[i] = ' ';
  } else {
    line += "\"request_text\":";
    AppendJsonString(line, request);
  }
  line += ",\"response\":";
  // Our replies are always JSON; strip a trailing newline so the record stays one line.
  while (!response.empty() && (response.back() == '\n' || response.back() == '\r')) response.remove_suffix(1);
  line += response;
  line += "}\n";
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

}  // namespace topofit::server
