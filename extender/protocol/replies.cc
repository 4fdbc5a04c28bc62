#include "extender/protocol/replies.h"

#include <algorithm>
#include <unordered_set>

#include "base/json_writer.h"

namespace topofit::protocol {
namespace {

using namespace std::string_view_literals;

// {"name":"reason",...}
void AppendFailures(std::string& out, const std::vector<placement::NodeFailure>& failures,
                    std::span<const std::string_view> names) {
  JsonBuffer buf(out);
  buf.Reserve(1);
  buf.Put('{');
  for (size_t i = 0; i < failures.size(); ++i) {
    const std::string_view name = names[failures[i].index], reason = failures[i].reason;
    buf.Reserve(JsonBuffer::MaxJsonBytes(name) + JsonBuffer::MaxJsonBytes(reason) + 2);
    if (i) buf.Put(',');
    buf.PutJson(name);
    buf.Put(':');
    buf.PutJson(reason);
  }
  buf.Reserve(1);
  buf.Put('}');
}

// {"metadata":{},"items":[kept Nodes as sent]}
void AppendKeptNodes(std::string& out, const ExtenderArgs& args, std::span<const std::string_view> names,
                     const std::vector<uint32_t>& passed) {
  out += R"({"metadata":{},"items":[)";
  std::unordered_set<std::string_view> kept;
  if (args.node_names)
    for (uint32_t i : passed) kept.insert(names[i]);
  bool first = true;
  for (size_t i = 0, p = 0; i < args.nodes->size(); ++i) {
    bool keep;
    if (args.node_names) {
      keep = kept.count((*args.nodes)[i].name) > 0;
    } else {
      while (p < passed.size() && passed[p] < i) ++p;
      keep = p < passed.size() && passed[p] == i;
    }
    if (!keep) continue;
    if (!first) out += ',';
    first = false;
    out += (*args.nodes)[i].json;
  }
  out += "]}";
}

// ["name",...]
void AppendPassedNames(std::string& out, std::span<const std::string_view> names, const std::vector<uint32_t>& passed) {
  JsonBuffer buf(out);
  buf.Reserve(1);
  buf.Put('[');
  for (size_t i = 0; i < passed.size(); ++i) {
    const std::string_view name = names[passed[i]];
    buf.Reserve(JsonBuffer::MaxJsonBytes(name) + 2);
    if (i) buf.Put(',');
    buf.PutJson(name);
  }
  buf.Reserve(1);
  buf.Put(']');
}

}  // namespace

std::string EncodeFilterResult(const ExtenderArgs& args, std::span<const std::string_view> names,
                               const placement::FilterOutcome& outcome) {
  std::string out;
  size_t echo_bytes = 0;
  if (args.nodes)
    for (const auto& n : *args.nodes) echo_bytes += n.json.size() + 1;
  // Room for every name passing, and a reason line for a few distinct failures; JsonBuffer grows
  // past that only when many nodes fail.
  size_t name_bytes = 0;
  for (std::string_view n : names) name_bytes += n.size() + 3;
  out.reserve(256 + name_bytes + echo_bytes);
  out += R"({"Nodes":)";
  if (args.nodes) AppendKeptNodes(out, args, names, outcome.passed);
  else out += "null";
  out += R"(,"NodeNames":)";
  if (args.node_names) AppendPassedNames(out, names, outcome.passed);
  else out += "null";
  out += R"(,"FailedNodes":)";
  AppendFailures(out, outcome.failed, names);
  out += R"(,"FailedAndUnresolvableNodes":)";
  AppendFailures(out, outcome.unresolvable, names);
  out += R"(,"Error":""})";
  return out;
}

std::string EncodeFilterError(std::string_view message) {
  std::string out = R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":)";
  AppendJsonString(out, message);
  out += '}';
  return out;
}

std::string EncodeHostPriorityList(std::span<const std::string_view> names, std::span<const placement::NodeScore> scores) {
  std::string out;
  size_t name_bytes = 0;
  for (std::string_view n : names) name_bytes += n.size();
  out.reserve(2 + name_bytes + scores.size() * 22);  // {"Host":"",,"Score":10}
  {
    JsonBuffer buf(out);  // Writes its length back into `out` when it goes.
    buf.Reserve(1);
    buf.Put('[');
    for (size_t i = 0; i < scores.size(); ++i) {
      const std::string_view name = names[scores[i].index];
      buf.Reserve(JsonBuffer::MaxJsonBytes(name) + 24);
      if (i) buf.Put(',');
      buf.Put(R"({"Host":)"sv);
      buf.PutJson(name);
      buf.Put(R"(,"Score":)"sv);
      const int score = std::clamp(scores[i].score, 0, 10);  // Two digits at most.
      if (score == 10) buf.Put("10"sv);
      else buf.Put(char('0' + score));
      buf.Put('}');
    }
    buf.Reserve(1);
    buf.Put(']');
  }
  return out;
}

std::string EncodeBindingResult(std::string_view error) {
  std::string out = R"({"Error":)";
  AppendJsonString(out, error);
  out += '}';
  return out;
}

std::string EncodePreemptionResult(const std::map<std::string, std::vector<std::string>, std::less<>>& victims,
                                   const std::map<std::string, int64_t>& pdb_violations) {
  std::string out = R"({"NodeNameToMetaVictims":{)";
  bool first = true;
  for (const auto& [node, uids] : victims) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, node);
    out += R"(:{"Pods":[)";
    for (size_t i = 0; i < uids.size(); ++i) {
      if (i) out += ',';
      out += R"({"UID":)";
      AppendJsonString(out, uids[i]);
      out += '}';
    }
    out += R"(],"NumPDBViolations":)";
    auto pdb = pdb_violations.find(node);
    out += std::to_string(pdb == pdb_violations.end() ? 0 : pdb->second);
    out += '}';
  }
  out += "}}";
  return out;
}

}  // namespace topofit::protocol
