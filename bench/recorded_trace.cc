#include "bench/recorded_trace.h"

#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/strings.h"
#include "bench/openb_csv.h"
#include "extender/protocol/extender_args.h"

namespace topofit::bench {
namespace {

using nlohmann::json;

// Seconds since the epoch from a number or an RFC 3339 string ("2024-05-01T10:00:00.123Z").
std::optional<double> Seconds(const json& ts) {
  if (ts.is_number()) return ts.get<double>();
  if (!ts.is_string()) return std::nullopt;
  std::tm tm{};
  double sec = 0;
  if (std::sscanf(ts.get<std::string>().c_str(), "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &sec) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_sec = 0;
  return double(timegm(&tm)) + sec;
}

// Envelope keys are case-insensitive on the wire (extender-protocol.md).
const json* Key(const json& o, std::string_view name) {
  if (!o.is_object()) return nullptr;
  for (auto it = o.begin(); it != o.end(); ++it)
    if (EqualsIgnoreCase(it.key(), name)) return &it.value();
  return nullptr;
}

}  // namespace

Result<std::vector<PodSpec>> ParseRecordedTrace(std::string_view text) {
  std::vector<PodSpec> pods;
  std::map<std::string, size_t> by_uid;
  std::map<std::string, double> departures;
  std::optional<double> t0;
  int line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Error{where + "not a JSON object"};
    std::string verb = j.value("verb", "");
    double ts = 0;
    if (j.contains("ts")) {
      auto s = Seconds(j["ts"]);
      if (!s) return Error{where + "ts must be seconds or an RFC 3339 time"};
      ts = *s;
    }
    if (!t0) t0 = ts;
    // A pod arrives with its first filter (the GPU entry) or prioritize-pods-without-gpus (the entry
    // every pod of the profile reaches, the only one a pod without GPUs does).
    if (verb == "filter" || verb == "prioritize-pods-without-gpus") {
      const json* req = Key(j, "request");
      if (!req) continue;  // The recorder keeps bodies that were not JSON as request_text: no pod to replay.
      auto args = protocol::DecodeExtenderArgs(req->dump());
      if (!args) return Error{where + args.error()};
      const k8s::PodObject& p = args->pod;
      std::string uid = p.meta.uid.empty() ? p.meta.namespace_ + "/" + p.meta.name : p.meta.uid;
      if (by_uid.count(uid)) continue;  // A scheduling retry, not a new pod.
      PodSpec s;
      s.name = uid;
      s.gpus = int(p.gpus);
      s.gpu_milli = p.gpus > 0 ? 1000 : 0;
      s.cpu_milli = p.cpu_milli;
      s.memory_mib = (p.memory_bytes + (1 << 20) - 1) >> 20;
      s.creation_time = int64_t(ts - *t0);
      by_uid[uid] = pods.size();
      pods.push_back(std::move(s));
    } else if (verb == "delete" || verb == "departure") {
      std::string uid = j.value("uid", "");
      if (const json* req = Key(j, "request"); uid.empty() && req) {
        if (const json* u = Key(*req, "PodUID"); u && u->is_string()) uid = u->get<std::string>();
      }
      if (!uid.empty()) departures[uid] = ts - *t0;
    }
  }
  for (const auto& [uid, t] : departures) {
    if (auto it = by_uid.find(uid); it != by_uid.end()) pods[it->second].deletion_time = int64_t(t);
  }
  return pods;
}

Result<std::vector<PodSpec>> ReadRecordedTrace(const std::string& path) { return ParseFile(path, ParseRecordedTrace); }

}  // namespace topofit::bench
