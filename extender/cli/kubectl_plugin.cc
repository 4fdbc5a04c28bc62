// `kubectl topofit`: the topofit binary answers as a kubectl plugin when it is run as
// `kubectl-topofit` (a symlink on the PATH). It reaches topofit's ops API through the API server's
// service proxy with the user's kubeconfig and context - no port-forward - and prints tables, or the
// API's JSON (-o json) or YAML (-o yaml), as kubectl does:
//
//   kubectl topofit nodes                     free GPUs and free NVLink sets of every node
//   kubectl topofit explain POD [-n NS]       every node's verdict for a pod of the cluster, best first
//   kubectl topofit pod POD [-n NS]           the GPUs topofit holds for a pod
//   kubectl topofit groups                    every group of pods: state, members, domain, why it waits
//
// The service is topofit-system/topofit-metrics, port "metrics" (manifests/base/metrics-service.yaml);
// --service NS/NAME:PORT names another. Exit status: 0 success, 1 the cluster or topofit failed, 2 usage.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/strings.h"
#include "extender/apiclient/api_client.h"
#include "extender/apiclient/kubeconfig.h"
#include "extender/apiclient/live_cluster.h"
#include "extender/cli/command.h"

namespace topofit::cli {
namespace {

using nlohmann::json;

struct PluginFlags {
  std::string kubeconfig;
  std::string context;
  std::string namespace_;
  std::string output = "table";
  std::string service = "topofit-system/topofit-metrics:metrics";
  std::string name;  // POD for explain and pod.
};

// kubectl's order: --kubeconfig, then the first file of $KUBECONFIG, then ~/.kube/config.
std::string KubeconfigPath(const PluginFlags& f) {
  if (!f.kubeconfig.empty()) return f.kubeconfig;
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) return std::string(Split(env, ':').front());
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.kube/config";
}

void Emit(YAML::Emitter& out, const json& j) {
  if (j.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, v] : j.items()) {
      out << YAML::Key << k << YAML::Value;
      Emit(out, v);
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& v : j) Emit(out, v);
    out << YAML::EndSeq;
  } else if (j.is_string()) {
    out << YAML::DoubleQuoted << j.get<std::string>();
  } else if (j.is_null()) {
    out << YAML::Null;
  } else {
    out << j.dump();  // Numbers and booleans as JSON writes them.
  }
}

// Columns padded to their widest cell, two spaces apart, as kubectl prints.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) line += c + 1 == r.size() ? r[c] : fmt::format("{:<{}}  ", r[c], width[c]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Ints(const json& a) {
  std::string s;
  if (a.is_array())
    for (const auto& v : a) s += (s.empty() ? "" : ",") + v.dump();
  return s.empty() ? "-" : s;
}

std::string NodesTable(const json& j) {
  std::vector<std::vector<std::string>> rows{{"NAME", "GPUS", "FREE", "FREE GPUS", "NVLINK SETS 2/4/8", "PODS", "PROFILE"}};
  for (const auto& n : j.value("nodes", json::array())) {
    const json sets = n.value("freeNvlinkSets", json::object());
    rows.push_back({n.value("name", ""), std::to_string(n.value("gpus", 0)), std::to_string(n.value("free", 0)),
                    Ints(n.value("freeGpus", json::array())),
                    fmt::format("{}/{}/{}", sets.value("2", 0), sets.value("4", 0), sets.value("8", 0)),
                    std::to_string(n.value("pods", 0)), n.value("profile", "")});
  }
  return Table(rows);
}

// For a group member: the group's state and plan, and every domain's room at its level.
std::string GroupExplainLines(const json& g) {
  std::string out = fmt::format("group {}/{}: {}, {} of {} members seen, {} bound", g.value("namespace", ""),
                                g.value("name", ""), g.value("state", ""), g.value("membersSeen", 0),
                                g.value("spec", json::object()).value("size", 0), g.value("membersBound", 0));
  if (!g.value("domain", "").empty()) out += ", in " + g["domain"].get<std::string>();
  out += "\n";
  if (!g.value("reason", "").empty()) out += "  waits: " + g["reason"].get<std::string>() + "\n";
  for (const auto& d : g.value("domains", json::array()))
    out += fmt::format("  {} {}: room for {} members, {} free GPUs{}\n", g.value("level", ""), d.value("domain", ""),
                       d.value("room", 0), d.value("freeGpus", 0), d.value("fits", false) ? " - fits" : "");
  for (const auto& m : g.value("plan", json::array()))
    out += fmt::format("  member on {}: GPUs {}\n", m.value("node", ""), Ints(m.value("gpus", json::array())));
  return out;
}

// "1.50 + 2.25": the fragmentation a placement causes and the price of its ring, in GPUs; "-" without.
std::string TradeCell(const json& trade) {
  if (!trade.is_object()) return "-";
  const json ring = trade.value("interconnectGpus", json());
  return fmt::format("{:.2f} + {}", trade.value("fragmentationGpus", 0.0),
                     ring.is_number() ? fmt::format("{:.2f}", ring.get<double>()) : std::string("inf"));
}

std::string ExplainTable(const json& j) {
  std::string head = fmt::format("pod {}: {} GPUs, policy {}{}\n", j.value("pod", ""), j.value("gpus", 0),
                                 j.value("policy", ""), j.value("chosen", json()).is_string()
                                                            ? ", best node " + j["chosen"].get<std::string>()
                                                            : ", no node fits");
  if (!j.value("error", "").empty()) head += "error: " + j["error"].get<std::string>() + "\n";
  // What the scores weighed: the workload estimate and, when pods are bound to GPU models, their demand.
  if (!j.value("workload", "").empty()) head += "workload: " + j["workload"].get<std::string>() + "\n";
  if (!j.value("gpuModels", "").empty()) head += j["gpuModels"].get<std::string>() + "\n";
  const json rate = j.value("interconnectRate", json());
  head += rate.is_number() ? fmt::format("interconnect rate {} GPUs per GPU of the pod (FRAG + RING: the trade, in GPUs)\n",
                                         rate.get<double>())
                           : "interconnect rate .inf: best ring first (RING inf: a slower set)\n";
  // DOMAIN LOSS only when a band loss ordered the best nodes (a pod of no group once groups are expected).
  bool band_loss = false;
  for (const auto& n : j.value("nodes", json::array())) band_loss |= n.contains("bandLoss");
  if (band_loss)
    head += "DOMAIN LOSS: GPUs of the expected groups' domains the node would break; least first among the best\n";
  std::vector<std::vector<std::string>> rows{
      {"NODE", "VERDICT", "SCORE", "GPUS", "GB/S", "LINKS", "FRAG + RING", "REASON"}};
  if (band_loss) rows[0].insert(rows[0].end() - 1, "DOMAIN LOSS");
  for (const auto& n : j.value("nodes", json::array())) {
    std::string links;
    for (const auto& l : n.value("links", json::array())) links += (links.empty() ? "" : ",") + l.get<std::string>();
    const json bw = n.value("bandwidthGBps", json(0));
    rows.push_back({n.value("node", ""), n.value("result", ""), std::to_string(n.value("score", 0)),
                    Ints(n.value("set", json())), bw.is_number() && bw.get<double>() > 0 ? fmt::format("{:.1f}", bw.get<double>()) : "-",
                    links.empty() ? "-" : links, TradeCell(n.value("trade", json())), n.value("reason", "")});
    if (band_loss) {
      const json loss = n.value("bandLoss", json());
      rows.back().insert(rows.back().end() - 1, loss.is_object() ? fmt::format("{:.2f}", loss.value("gpus", 0.0)) : "-");
    }
  }
  if (j.contains("group") && j["group"].is_object()) head += GroupExplainLines(j["group"]);
  return head + Table(rows);
}

std::string GroupsTable(const json& j) {
  std::vector<std::vector<std::string>> rows{
      {"NAMESPACE", "GROUP", "STATE", "MEMBERS", "BOUND", "GPUS", "LEVEL", "DOMAIN", "WAITING", "REASON"}};
  for (const auto& g : j.value("groups", json::array())) {
    const json spec = g.value("spec", json::object());
    const json& sp = spec.is_object() ? spec : json::object();
    rows.push_back({g.value("namespace", ""), g.value("name", ""), g.value("state", ""),
                    fmt::format("{}/{}", g.value("membersSeen", 0), sp.value("size", 0)),
                    std::to_string(g.value("membersBound", 0)), std::to_string(sp.value("gpus", 0)),
                    fmt::format("{} {}", sp.value("policy", ""), sp.value("level", "")),
                    g.value("domain", "").empty() ? "-" : g["domain"].get<std::string>(),
                    fmt::format("{:.0f}s", g.value("waitingSeconds", 0.0)),
                    g.value("reason", "").empty() ? "-" : g["reason"].get<std::string>()});
  }
  return Table(rows);
}

std::string PodTable(const json& j) {
  return Table({{"POD", "NODE", "GPUS", "KIND"},
                {j.value("pod", ""), j.value("node", ""), Ints(j.value("gpus", json::array())), j.value("kind", "")}});
}

int Fail(const std::string& message, int status) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return status;
}

int RunPlugin(const std::string& verb, const PluginFlags& f) {
  if (f.output != "table" && f.output != "json" && f.output != "yaml")
    return Fail(fmt::format("-o {}: expected table, json or yaml", f.output), 2);
  // "NS/NAME:PORT" of the service in front of topofit's ops port.
  const size_t slash = f.service.find('/'), colon = f.service.rfind(':');
  if (slash == std::string::npos || colon == std::string::npos || colon < slash)
    return Fail(fmt::format("--service {}: expected NAMESPACE/NAME:PORT", f.service), 2);
  // NAME:PORT stays one path segment with a literal ':' (the API server splits it there).
  const std::string proxy = fmt::format("/api/v1/namespaces/{}/services/{}:{}/proxy",
                                        apiclient::UrlEncode(f.service.substr(0, slash)),
                                        apiclient::UrlEncode(f.service.substr(slash + 1, colon - slash - 1)),
                                        apiclient::UrlEncode(f.service.substr(colon + 1)));
  apiclient::LiveOptions connect;
  connect.kubeconfig = KubeconfigPath(f);
  connect.context = f.context;
  auto api = apiclient::ConnectApi(connect);
  if (!api) return Fail(api.error(), 1);
  const std::string ns = f.namespace_.empty() ? "default" : f.namespace_;
  auto call = [&](const std::string& method, const std::string& p, const std::string& body) -> Result<json> {
    auto res = (*api)->Do(method, p, body, body.empty() ? "" : "application/json");
    if (!res) return Error{res.error()};
    if (res->status / 100 != 2) return Error{fmt::format("{} {}: {}", method, p, apiclient::ApiErrorMessage(*res))};
    json j = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Error{fmt::format("{} {}: the reply is not JSON", method, p)};
    return j;
  };

  Result<json> reply = Error{""};
  std::string (*table)(const json&) = nullptr;
  if (verb == "nodes") {
    reply = call("GET", proxy + "/api/v1/nodes", "");
    table = NodesTable;
  } else if (verb == "groups") {
    reply = call("GET", proxy + "/api/v1/groups", "");
    table = GroupsTable;
  } else if (verb == "pod") {
    reply = call("GET", proxy + "/api/v1/pods/" + apiclient::UrlEncode(ns) + "/" + apiclient::UrlEncode(f.name), "");
    table = PodTable;
  } else {  // explain: the pod as the API server has it, evaluated by topofit.
    auto pod = call("GET", "/api/v1/namespaces/" + apiclient::UrlEncode(ns) + "/pods/" + apiclient::UrlEncode(f.name), "");
    if (!pod) return Fail(pod.error(), 1);
    reply = call("POST", proxy + "/api/v1/explain", pod->dump());
    table = ExplainTable;
  }
  if (!reply) return Fail(reply.error(), 1);
  if (f.output == "json") {
    std::printf("%s\n", reply->dump(2).c_str());
  } else if (f.output == "yaml") {
    YAML::Emitter out;
    Emit(out, *reply);
    std::printf("%s\n", out.c_str());
  } else {
    std::fputs(table(*reply).c_str(), stdout);
  }
  return 0;
}

}  // namespace

int RunKubectlPlugin(int argc, char** argv) {
  CLI::App app{"kubectl topofit: topofit's view of the cluster's GPUs, through the API server", "kubectl topofit"};
  app.require_subcommand(1, 1);
  PluginFlags f;
  auto common = [&f](CLI::App* a) {
    a->add_option("--kubeconfig", f.kubeconfig, "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)");
    a->add_option("--context", f.context, "kubeconfig context (default: current-context)");
    a->add_option("-o,--output", f.output, "table, json or yaml")->capture_default_str();
    a->add_option("--service", f.service, "NAMESPACE/NAME:PORT of the service in front of topofit's ops port")
        ->capture_default_str();
  };
  CLI::App* nodes = app.add_subcommand("nodes", "Free GPUs and free NVLink-connected sets of every node");
  CLI::App* explain = app.add_subcommand("explain", "Every node's verdict, set and score for a pod, best first");
  CLI::App* pod = app.add_subcommand("pod", "The GPUs topofit holds for a pod");
  CLI::App* groups = app.add_subcommand("groups", "Every group of pods: state, members, domain, why it waits");
  for (CLI::App* a : {nodes, explain, pod, groups}) common(a);
  for (CLI::App* a : {explain, pod}) {
    a->add_option("POD", f.name, "The pod's name")->required();
    a->add_option("-n,--namespace", f.namespace_, "The pod's namespace (default: default)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return RunPlugin(nodes->parsed() ? "nodes" : explain->parsed() ? "explain" : groups->parsed() ? "groups" : "pod", f);
}

}  // namespace topofit::cli
