#include "extender/server/serve_settings.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "base/duration.h"
#include "extender/placement/tie_break.h"

namespace topofit::server {
namespace {

using Node = YAML::Node;
using Settings = ServeSettings;

std::string JoinHostPort(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Result<std::chrono::nanoseconds> ReadDuration(const Node& v, std::string_view where) {
  auto d = ParseDuration(v.as<std::string>());
  if (!d) return Error{fmt::format("{}: {}", where, d.error())};
  return *d;
}

// A listener limit in whole seconds (ListenerOptions counts seconds): "10s", "2m", or a number of seconds.
Status ReadSeconds(const Node& v, std::string_view where, int& out) {
  auto d = ReadDuration(v, where);
  if (!d) return Error{d.error()};
  if (*d < std::chrono::seconds(1) || *d % std::chrono::seconds(1) != std::chrono::nanoseconds(0) ||
      *d > std::chrono::hours(24))
    return Error{fmt::format("{} '{}': not a whole number of seconds from 1s to 24h", where, v.Scalar())};
  out = static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(*d).count());
  return Status::Ok();
}

Status ReadPositive(const Node& v, std::string_view where, int& out) {
  int n = v.as<int>();
  if (n <= 0) return Error{fmt::format("{} '{}': not a number > 0", where, v.Scalar())};
  return out = n, Status::Ok();
}

Status ReadWeights(const Node& v, std::string_view, Settings& s) {
  auto& weights = s.config.pipeline.weights;
  weights.clear();
  for (const auto& w : v) weights[w.first.as<std::string>()] = w.second.as<double>();
  return Status::Ok();
}

std::string ShowWeights(const Settings& s) {
  std::string out;
  for (const auto& [name, weight] : s.config.pipeline.weights)
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", name, weight);
  return "{" + out + "}";
}

Status ReadRequestMix(const Node& v, std::string_view, Settings& s) {
  auto& entries = s.config.pipeline.mix.entries;
  entries.clear();
  for (const auto& e : v) entries.push_back({e["size"].as<int>(), e["weight"].as<uint32_t>()});
  return Status::Ok();
}

std::string ShowRequestMix(const Settings& s) {
  std::string out;
  for (const auto& e : s.config.pipeline.mix.entries)
    out += fmt::format("{}{{size: {}, weight: {}}}", out.empty() ? "" : ", ", e.size, e.weight);
  return "[" + out + "]";
}

Status ReadLevels(const Node& v, std::string_view where, Settings& s) {
  std::string lv = v.as<std::string>();
  if (lv != "relative" && lv != "absolute") return Error{fmt::format("{}: '{}' is not relative or absolute", where, lv)};
  s.config.pipeline.relative_levels = lv == "relative";
  return Status::Ok();
}

Status ReadTieBreak(const Node& v, std::string_view where, Settings& s) {
  std::string tb = v.as<std::string>();
  auto rule = placement::ParseTieBreak(tb);
  if (!rule) return Error{fmt::format("{}: '{}' is not fit-then-pack, pack or none", where, tb)};
  s.config.pipeline.tie_break = *rule;
  return Status::Ok();
}

Status ReadHalfLife(const Node& v, std::string_view where, Settings& s) {
  double h = v.as<double>();
  if (!(h >= 1)) return Error{fmt::format("{}: {} is not a pod count >= 1", where, h)};
  s.config.pipeline.workload.half_life = h;
  return Status::Ok();
}

// groupLevels: [{name: block, labels: [network.topology.nvidia.com/block, ...]}, ...], broadest first.
Status ReadGroupLevels(const Node& v, std::string_view where, Settings& s) {
  if (!v.IsSequence()) return Error{fmt::format("{}: expected a list of {{name: LEVEL, labels: [KEY, ...]}}", where)};
  groups::DomainLevels levels;
  for (const auto& l : v) {
    if (!l.IsMap() || !l["name"] || !l["labels"] || !l["labels"].IsSequence() || l.size() != 2)
      return Error{fmt::format("{}: every level is {{name: LEVEL, labels: [KEY, ...]}}", where)};
    groups::DomainLevel level{l["name"].as<std::string>(), {}};
    for (const auto& key : l["labels"]) level.keys.push_back(key.as<std::string>());
    levels.levels.push_back(std::move(level));
  }
  if (Status valid = levels.Validate(); !valid.ok()) return Error{fmt::format("{}: {}", where, valid.error())};
  s.config.group_levels = std::move(levels);
  return Status::Ok();
}

std::string ShowGroupLevels(const Settings& s) {
  std::string out;
  for (const groups::DomainLevel& l : s.config.group_levels.levels)
    out += fmt::format("{}{{name: {}, labels: [{}]}}", out.empty() ? "" : ", ", l.name, fmt::join(l.keys, ", "));
  return "[" + out + "]";
}

Status ReadBindEvents(const Node& v, std::string_view where, Settings& s) {
  auto e = ParseBindEvents(v.as<std::string>());
  if (!e) return Error{fmt::format("{}: '{}' is not notable or all", where, v.Scalar())};
  s.config.bind_events = *e;
  return Status::Ok();
}

Status ReadInterconnectRate(const Node& v, std::string_view where, Settings& s) {
  double r = v.as<double>();
  if (!(r >= 0)) return Error{fmt::format("{}: {} is not a rate >= 0 (GPUs per GPU of the pod; .inf for best ring first)", where, v.Scalar())};
  s.config.pipeline.interconnect_rate = r;
  return Status::Ok();
}

std::string ShowInterconnectRate(const Settings& s) {
  const double r = s.config.pipeline.interconnect_rate;
  return std::isfinite(r) ? fmt::format("{}", r) : ".inf";
}

// `read` and `show` of the settings that are one field of their type, read as YAML reads it.
#define TOPOFIT_FIELD(T, field)                                                                             \
  [](const Node& v, std::string_view, Settings& s) { return s.field = v.as<T>(), Status::Ok(); },          \
      [](const Settings& s) { return fmt::format("{}", s.field); }
// `read` and `show` of a listener limit in seconds (`field` an int), and of a count that must be > 0.
#define TOPOFIT_SECONDS(field)                                                                              \
  [](const Node& v, std::string_view where, Settings& s) { return ReadSeconds(v, where, s.field); },        \
      [](const Settings& s) { return FormatDuration(std::chrono::seconds(s.field)); }
#define TOPOFIT_POSITIVE(field)                                                                             \
  [](const Node& v, std::string_view where, Settings& s) { return ReadPositive(v, where, s.field); },       \
      [](const Settings& s) { return fmt::format("{}", s.field); }

constexpr ServeSetting kSettings[] = {
    {"listen", "--listen", "ADDR:PORT",
     "Where the verbs listen (and, without opsListen, everything else); ADDR may be empty (all interfaces) or [v6]",
     [](const Node& v, std::string_view, Settings& s) { return ParseListen(v.as<std::string>(), s.config.server); },
     [](const Settings& s) { return JoinHostPort(s.config.server.host, s.config.server.port); }},
    {"opsListen", "--ops-listen", "ADDR:PORT",
     "/healthz, /readyz, /metrics and /api/v1 on a listener of their own, so that the verbs can stay on "
     "127.0.0.1 beside kube-scheduler; empty: all on listen",
     [](const Node& v, std::string_view, Settings& s) { return ParseOpsListen(v.as<std::string>(), s.config.server); },
     [](const Settings& s) {
       return s.config.server.ops_port < 0 ? "" : JoinHostPort(s.config.server.ops_host, s.config.server.ops_port);
     }},
    {"urlPrefix", "--url-prefix", "PATH", "Path prefix of the verbs", TOPOFIT_FIELD(std::string, config.server.url_prefix)},
    {"", "--snapshot", "FILE",
     "Cluster snapshot: `kubectl get nodes,pods -A -o json` (or -o yaml) output; empty: the embedded demo cluster",
     TOPOFIT_FIELD(std::string, source.snapshot)},
    {"", "--record", "FILE", "Append every verb request and reply to FILE as JSON lines",
     TOPOFIT_FIELD(std::string, source.record)},
    {"", "--config", "FILE", "YAML file of the settings that have a config key; flags given win over it",
     TOPOFIT_FIELD(std::string, source.config_file)},
    {"maxBodyBytes", "--max-body-bytes", "BYTES", "Largest request body accepted",
     TOPOFIT_FIELD(size_t, config.server.max_body_bytes)},
    {"threads", "--threads", "N", "HTTP worker threads; 0: max(32, 4 x cores)", TOPOFIT_FIELD(int, config.server.threads)},
    {"keepAlive", "--keep-alive", "DURATION", "An idle keep-alive connection closes after this (whole seconds)",
     TOPOFIT_SECONDS(config.server.keep_alive_seconds)},
    {"readTimeout", "--read-timeout", "DURATION",
     "A request's head and body must arrive within this of its first byte (of the accept, TLS handshake included, "
     "for a connection's first request), else 408 and close",
     TOPOFIT_SECONDS(config.server.read_timeout_seconds)},
    {"writeTimeout", "--write-timeout", "DURATION", "A reply not taken by the client within this closes its connection",
     TOPOFIT_SECONDS(config.server.write_timeout_seconds)},
    {"requestTimeout", "--request-timeout", "DURATION",
     "A handler's deadline: past it the client gets a 503 and the handler's work is told to stop",
     TOPOFIT_SECONDS(config.server.request_timeout_seconds)},
    {"maxConnections", "--max-connections", "N",
     "Open connections per listener; past it the least recently active connection that no worker holds closes, "
     "those that never sent a whole request first",
     TOPOFIT_POSITIVE(config.server.max_connections)},
    {"maxBufferedBytes", "--max-buffered-bytes", "BYTES",
     "Request bodies held at once per listener (never less than the body limit); past it a 503 with Retry-After",
     TOPOFIT_FIELD(size_t, config.server.max_buffered_bytes)},
    {"maxConcurrentQueries", "--max-concurrent-queries", "N",
     "Queries (/api/v1/...) running at once, at the lowest CPU priority and within 0.25 cores on average; one more, or one past that budget, gets a 503 with Retry-After",
     TOPOFIT_POSITIVE(config.server.max_concurrent_queries)},
    {"maxQueryBodyBytes", "--max-query-body-bytes", "BYTES", "Largest query body (explain's pod); past it a 413",
     TOPOFIT_FIELD(size_t, config.server.max_query_body_bytes)},
    {"", "--kubeconfig", "FILE", "Live mode: watch and bind through the API server of this kubeconfig",
     TOPOFIT_FIELD(std::string, source.kubeconfig)},
    {"", "--context", "NAME", "kubeconfig context; empty: its current-context", TOPOFIT_FIELD(std::string, source.context)},
    {"", "--kube-api-qps", "QPS", "Requests per second to the API server (binds, lists, watches); 0: no limit",
     [](const Node& v, std::string_view where, Settings& s) {
       double qps = v.as<double>();
       if (!(qps >= 0)) return Status(Error{fmt::format("{} '{}': not a number >= 0", where, v.Scalar())});
       return s.source.kube_api_qps = qps, Status::Ok();
     },
     [](const Settings& s) { return fmt::format("{}", s.source.kube_api_qps); }},
    {"", "--kube-api-burst", "N", "Requests allowed at once above --kube-api-qps",
     [](const Node& v, std::string_view where, Settings& s) {
       int burst = v.as<int>();
       if (burst <= 0) return Status(Error{fmt::format("{} '{}': not a number > 0", where, v.Scalar())});
       return s.source.kube_api_burst = burst, Status::Ok();
     },
     [](const Settings& s) { return fmt::format("{}", s.source.kube_api_burst); }},
    {"", "--kube-api-list-limit", "N",
     "Objects per page when listing nodes and pods (`limit`, followed by `continue`, as client-go lists); 0: one "
     "unpaged list",
     [](const Node& v, std::string_view where, Settings& s) {
       int limit = v.as<int>();
       if (limit < 0) return Status(Error{fmt::format("{} '{}': not a number >= 0", where, v.Scalar())});
       return s.source.kube_api_list_limit = limit, Status::Ok();
     },
     [](const Settings& s) { return fmt::format("{}", s.source.kube_api_list_limit); }},
    {"filterKeepsBest", "--filter-keeps-best", "",
     "Filter passes only the best-scored nodes, so that kube-scheduler needs no prioritizeVerb",
     TOPOFIT_FIELD(bool, config.pipeline.filter_keeps_best)},
    {"tlsCertFile", "--tls-cert-file", "FILE",
     "Serve HTTPS on listen with this PEM certificate (chain), reloaded when the file changes; opsListen stays "
     "plain HTTP",
     TOPOFIT_FIELD(std::string, config.server.tls.cert_file)},
    {"tlsPrivateKeyFile", "--tls-private-key-file", "FILE", "PEM private key of the TLS certificate",
     TOPOFIT_FIELD(std::string, config.server.tls.key_file)},
    {"clientCAFile", "--client-ca-file", "FILE",
     "Require on listen a client certificate signed by a CA in this PEM bundle",
     TOPOFIT_FIELD(std::string, config.server.tls.client_ca_file)},
    {"", "--in-cluster", "",
     "Live mode with the pod's service account (the default when KUBERNETES_SERVICE_HOST is set and there is no "
     "snapshot)",
     TOPOFIT_FIELD(bool, source.in_cluster)},
    {"tlsReloadInterval", "", "DURATION", "How often the TLS files are looked at for changes",
     [](const Node& v, std::string_view where, Settings& s) {
       auto d = ReadDuration(v, where);
       if (!d) return Status(Error{d.error()});
       return s.config.server.tls_reload_interval = std::chrono::duration_cast<std::chrono::milliseconds>(*d), Status::Ok();
     },
     [](const Settings& s) { return FormatDuration(s.config.server.tls_reload_interval); }},
    {"reservationTTL", "", "DURATION",
     "How long a bind's reservation holds its GPUs unconfirmed (a duration, or a number of seconds)",
     [](const Node& v, std::string_view where, Settings& s) {
       auto d = ReadDuration(v, where);
       if (!d) return Status(Error{d.error()});
       return s.config.model.reservation_ttl = std::chrono::duration_cast<cluster::Duration>(*d), Status::Ok();
     },
     [](const Settings& s) { return FormatDuration(s.config.model.reservation_ttl); }},
    {"bindEvents", "--bind-events", "WHICH",
     "notable or all: which binds also write a GPUsAssigned Event (a second API write per pod); every bind "
     "sets topofit.io/placement, the same words, in its Binding. notable: group members and pods on DRA "
     "nodes (docs/throughput.md)",
     ReadBindEvents, [](const Settings& s) { return std::string(ToString(s.config.bind_events)); }},
    {"groupLevels", "", "LIST",
     "The network levels groups of pods are placed in, broadest first, each with the node labels that name "
     "its domains, tried in order (extender/groups/network_domains.h, docs/groups.md)",
     ReadGroupLevels, ShowGroupLevels},
    {"scoring.weights", "", "MAP",
     "Score plugin -> weight: SetQuality, FragmentationGradient (and the older Packing, Fragmentation, "
     "Stranding); replaces the whole map, so a plugin left out is off",
     ReadWeights, ShowWeights},
    {"scoring.levels", "", "LEVELS",
     "relative or absolute: how the weighted sum becomes kube-scheduler's 0..10 (extender/placement/pipeline_config.h)", ReadLevels,
     [](const Settings& s) { return std::string(s.config.pipeline.relative_levels ? "relative" : "absolute"); }},
    {"scoring.tieBreak", "", "RULE",
     "fit-then-pack, pack or none: which nodes of the best band get 10 (extender/placement/tie_break.h)", ReadTieBreak,
     [](const Settings& s) { return std::string(placement::ToString(s.config.pipeline.tie_break)); }},
    {"scoring.interconnectRate", "", "GPUS",
     "The exchange rate between a multi-GPU pod's ring and fragmentation: a k-GPU pod on a set of x times the "
     "best ring any node offers is charged R k (1 - x) GPUs against the GPUs its placement makes unusable; 0: "
     "fragmentation alone, .inf: best ring of the cluster first (docs/placement.md)",
     ReadInterconnectRate, ShowInterconnectRate},
    {"scoring.workloadHalfLife", "", "PODS",
     "The workload estimate's decay, in pods (extender/placement/workload_estimate.h)",
     ReadHalfLife, [](const Settings& s) { return fmt::format("{}", s.config.pipeline.workload.half_life); }},
    {"scoring.podsWithoutGpus", "", "",
     "The prioritize verb scores pods without GPUs too (the prioritize-pods-without-gpus verb scores them "
     "whatever this says; the bench reads it too)",
     TOPOFIT_FIELD(bool, config.pipeline.score_pods_without_gpus)},
    {"scoring.domainLoss", "", "",
     "Once a group of pods has been planned, a pod of no group goes, among the nodes tied on its score, where "
     "it breaks the fewest network domains the expected groups need (docs/groups.md, Pods of no group); "
     "false: the tie-break rule alone, as before groups",
     TOPOFIT_FIELD(bool, config.domain_loss)},
    {"scoring.requestMix", "", "LIST",
     "The request sizes the cluster expects, with their weights: [{size: N, weight: W}, ...]", ReadRequestMix,
     ShowRequestMix},
};

#undef TOPOFIT_FIELD
#undef TOPOFIT_SECONDS
#undef TOPOFIT_POSITIVE

}  // namespace

std::span<const ServeSetting> ServeSettingsTable() { return kSettings; }

const ServeSetting* FindServeFlag(std::string_view flag) {
  for (const ServeSetting& s : kSettings)
    if (!s.flag.empty() && s.flag == flag) return &s;
  return nullptr;
}

const ServeSetting* FindServeKey(std::string_view key) {
  for (const ServeSetting& s : kSettings)
    if (!s.key.empty() && s.key == key) return &s;
  return nullptr;
}

Status ReadSettingYaml(const ServeSetting& setting, const YAML::Node& v, ServeSettings& s) {
  try {
    return setting.read(v, fmt::format("config {}", setting.key), s);
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("config: line {}: {}", e.mark.line + 1, e.msg)};
  }
}

Status ReadSettingFlag(const ServeSetting& setting, const std::string& text, ServeSettings& s) {
  try {
    return setting.read(YAML::Node(text), setting.flag, s);
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("{} '{}': {}", setting.flag, text, e.msg)};
  }
}

Result<ServeSettings> ResolveServeSettings(std::span<const GivenFlag> given) {
  ServeSettings s;
  for (const GivenFlag& g : given) {
    if (g.setting->flag != "--config" || g.text.empty()) continue;
    if (Status st = ApplyConfigFile(g.text, s.config); !st.ok()) return Error{st.error()};
  }
  for (const GivenFlag& g : given)
    if (Status st = ReadSettingFlag(*g.setting, g.text, s); !st.ok()) return Error{st.error()};
  return s;
}

std::string ServeSettingsMarkdown() {
  const ServeSettings defaults;
  std::string out = "| config key | flag | default | meaning |\n|---|---|---|---|\n";
  auto code = [](std::string_view text) { return text.empty() ? std::string() : fmt::format("`{}`", text); };
  for (const ServeSetting& s : kSettings)
    out += fmt::format("| {} | {} | {} | {} |\n", code(s.key), code(s.flag), code(s.show(defaults)), s.help);
  return out;
}

}  // namespace topofit::server
