// The shipped monitoring (manifests/monitoring/grafana-dashboard.json and prometheus-rules.yaml) reads
// metrics topofit really exports: the built `topofit serve` runs on its demo cluster, answers one
// filter call (so the request metrics have samples; its pod is bound to a GPU model, so the gauges of
// model-bound demand have them too), the built `topofit node` runs with its fake
// backend, and every metric name in the dashboard's PromQL and in the alert expressions must be a
// sample name of one of their /metrics (the group topofit-node: of `topofit node`'s) - `_bucket`,
// `_sum` and `_count` only on a family declared as a histogram; `up` is Prometheus's own. The latency alert's threshold
// is checked against the extender httpTimeout of manifests/base/scheduler-config.yaml.
#include <doctest/doctest.h>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"
#include "base/files.h"
#include "base/strings.h"
#include "extender/cli/cli_test_util.h"
#include "test/util/serve_process.h"

namespace {

using nlohmann::json;
using topofit::cli::testing::NodeProcess;
using topofit::testing::ServeProcess;

std::string Source(const std::string& relative) {
  auto text = topofit::ReadFile(std::string(TOPOFIT_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(text.ok(), (text.ok() ? "" : text.error()));
  return *text;
}

bool IdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool IdentChar(char c) { return IdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Metric names in a PromQL expression. Label matchers ({...}), ranges ([...]) and string literals
// are dropped first; then an identifier is a metric name unless it is an operator keyword, an
// aggregation, or followed by '(' (a function); the parenthesised label list after by/without/on/
// ignoring/group_left/group_right is skipped. Numbers (0.99, 2.5, 1e3) start with a digit.
std::set<std::string> MetricNames(std::string_view expr) {
  std::string plain;
  for (size_t i = 0; i < expr.size(); ++i) {
    char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {  // String literal, with backslash escapes.
      for (++i; i < expr.size() && expr[i] != c; ++i)
        if (expr[i] == '\\') ++i;
      continue;
    }
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      while (i < expr.size() && expr[i] != close) ++i;
      REQUIRE_MESSAGE(i < expr.size(), "unbalanced '" << c << "' in: " << expr);
      plain += ' ';
      continue;
    }
    plain += c;
  }
  static const std::set<std::string> kKeywords = {"and", "or", "unless", "bool", "offset", "Inf", "NaN", "inf", "nan"};
  static const std::set<std::string> kAggregations = {"sum",   "min",   "max",      "avg",    "group",
                                                      "count", "stddev", "stdvar",  "topk",   "bottomk",
                                                      "quantile", "count_values", "limitk", "limit_ratio"};
  static const std::set<std::string> kGrouping = {"by", "without", "on", "ignoring", "group_left", "group_right"};
  std::set<std::string> names;
  for (size_t i = 0; i < plain.size();) {
    if (std::isdigit(static_cast<unsigned char>(plain[i])) || plain[i] == '.') {
      while (i < plain.size() && (IdentChar(plain[i]) || plain[i] == '.')) ++i;  // 0.99, 1e3, 5m
      continue;
    }
    if (!IdentStart(plain[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < plain.size() && IdentChar(plain[i])) ++i;
    std::string word = plain.substr(start, i - start);
    size_t next = i;
    while (next < plain.size() && std::isspace(static_cast<unsigned char>(plain[next]))) ++next;
    bool call = next < plain.size() && plain[next] == '(';
    if (kGrouping.count(word)) {
      if (call) {  // Label names up to the closing parenthesis.
        i = plain.find(')', next);
        REQUIRE_MESSAGE(i != std::string::npos, "unbalanced '(' after " << word << " in: " << expr);
        ++i;
      }
      continue;
    }
    if (call || kKeywords.count(word) || kAggregations.count(word)) continue;
    names.insert(word);
  }
  return names;
}

// Every "expr" in the dashboard's panels (rows nest panels), and the metric of each
// label_values(METRIC, LABEL) template query.
void DashboardExprs(const json& j, std::vector<std::string>& exprs, std::set<std::string>& template_metrics) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "expr" && value.is_string()) exprs.push_back(value.get<std::string>());
      if ((key == "definition" || key == "query") && value.is_string()) {
        std::string q = value.get<std::string>();
        if (size_t at = q.find("label_values("); at != std::string::npos) {
          size_t begin = at + 13, end = q.find_first_of(",)", begin);
          REQUIRE(end != std::string::npos);
          template_metrics.insert(std::string(topofit::Trim(std::string_view(q).substr(begin, end - begin))));
        }
      }
      DashboardExprs(value, exprs, template_metrics);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) DashboardExprs(v, exprs, template_metrics);
  }
}

// The exposition text: sample names, and the declared type of each family.
struct Exposition {
  std::set<std::string> samples;
  std::map<std::string, std::string> types;
  std::string text;
};

Exposition ParseExposition(const std::string& text) {
  Exposition e;
  e.text = text;
  for (std::string_view line : topofit::SplitLines(text)) {
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::string_view rest = line.substr(7);
      size_t sp = rest.find(' ');
      REQUIRE(sp != std::string_view::npos);
      e.types[std::string(rest.substr(0, sp))] = std::string(rest.substr(sp + 1));
      continue;
    }
    if (line[0] == '#') continue;
    size_t end = line.find_first_of("{ ");
    REQUIRE(end != std::string_view::npos);
    e.samples.insert(std::string(line.substr(0, end)));
  }
  return e;
}

// A name used in PromQL is exported: a sample name, and a histogram's _bucket/_sum/_count only
// when its family is declared a histogram.
void CheckExported(const Exposition& m, const std::string& name, const std::string& where) {
  CAPTURE(where);
  CAPTURE(name);
  if (name == "up") return;  // Prometheus's own, per target.
  CHECK_MESSAGE(m.samples.count(name) == 1, "no samples of " << name << " in /metrics");
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      std::string family = name.substr(0, name.size() - suffix.size());
      auto type = m.types.find(family);
      if (type != m.types.end()) {
        CHECK_MESSAGE(type->second == "histogram", name << ": " << family << " is a " << type->second);
        return;
      }
    }
  }
  // Not a histogram series: the name is itself a declared family.
  CHECK_MESSAGE(m.types.count(name) == 1, name << " has no # TYPE line");
}

Exposition ScrapeAfterOneFilter() {
  ServeProcess serve;
  httplib::Client client("127.0.0.1", serve.port());
  client.set_read_timeout(10, 0);
  auto nodes = client.Get("/api/v1/nodes");
  REQUIRE(nodes);
  REQUIRE(nodes->status == 200);
  json names = json::array();
  json listed = json::parse(nodes->body);
  for (const auto& n : listed["nodes"]) names.push_back(n["name"]);
  REQUIRE(names.size() >= 1);
  json pod = {{"metadata", {{"name", "monitoring-test"}, {"namespace", "t"}, {"uid", "uid-monitoring-test"}}},
              {"spec", {{"nodeSelector", {{"nvidia.com/gpu.product", "Tesla-V100-SXM2-32GB"}}},
                        {"containers", {{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}}}}},
              {"status", json::object()}};
  auto filter = client.Post("/scheduler/filter", json{{"Pod", pod}, {"NodeNames", names}}.dump(), "application/json");
  REQUIRE(filter);
  REQUIRE_MESSAGE(filter->status == 200, filter->body);
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  REQUIRE(metrics->status == 200);
  return ParseExposition(metrics->body);
}

Exposition ScrapeNode() {
  NodeProcess node(std::string(TOPOFIT_SOURCE_DIR) + "/topology/testdata/topo/h100-8-nv18-8nic.txt");
  httplib::Client client("127.0.0.1", node.port);
  client.set_read_timeout(10, 0);
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  REQUIRE(metrics->status == 200);
  return ParseExposition(metrics->body);
}

TEST_CASE("monitoring: dashboard and alert expressions use only metrics topofit exports") {
  Exposition m = ScrapeAfterOneFilter();
  const Exposition node = ScrapeNode();
  REQUIRE(m.text.find("topofit_requests_total{verb=\"filter\"} 1") != std::string::npos);

  // The dashboard.
  json dashboard = json::parse(Source("manifests/monitoring/grafana-dashboard.json"));
  REQUIRE(dashboard["panels"].is_array());
  std::vector<std::string> exprs;
  std::set<std::string> template_metrics;
  DashboardExprs(dashboard, exprs, template_metrics);
  CHECK(exprs.size() >= 15);
  std::set<std::string> dashboard_names(template_metrics);
  for (const std::string& expr : exprs) {
    std::set<std::string> names = MetricNames(expr);
    CHECK_MESSAGE(!names.empty(), "no metric in: " << expr);
    for (const std::string& name : names) {
      CheckExported(m, name, "dashboard: " + expr);
      dashboard_names.insert(name);
    }
  }
  for (const std::string& name : template_metrics) CheckExported(m, name, "dashboard variable");
  // What the dashboard is for: verbs, errors, decisions, GPUs, NVLink sets, pending pods, nodes.
  for (const char* want : {"topofit_requests_total", "topofit_request_duration_seconds_bucket",
                           "topofit_request_errors_total", "topofit_decisions_total", "topofit_free_gpus",
                           "topofit_usable_gpus", "topofit_reserved_gpus", "topofit_free_nvlink_sets",
                           "topofit_node_free_nvlink_sets", "topofit_pending_pods", "topofit_nodes",
                           "topofit_gpu_model_wanted_gpus", "topofit_gpu_model_free_gpus"}) {
    CAPTURE(std::string(want));
    CHECK(dashboard_names.count(want) == 1);
  }

  // The alerts.
  YAML::Node rules = YAML::Load(Source("manifests/monitoring/prometheus-rules.yaml"));
  CHECK(rules["kind"].as<std::string>() == "PrometheusRule");
  CHECK(rules["apiVersion"].as<std::string>() == "monitoring.coreos.com/v1");
  std::map<std::string, std::string> alerts;  // name -> expr
  std::set<std::string> rule_names;
  for (const auto& group : rules["spec"]["groups"]) {
    const bool node_group = group["name"].as<std::string>() == "topofit-node";
    for (const auto& rule : group["rules"]) {
      std::string alert = rule["alert"].as<std::string>("");
      std::string expr = rule["expr"].as<std::string>("");
      CAPTURE(alert);
      REQUIRE_FALSE(alert.empty());
      REQUIRE_FALSE(expr.empty());
      CHECK(rule["for"].IsDefined());
      CHECK(rule["labels"]["severity"].IsDefined());
      CHECK(rule["annotations"]["summary"].IsDefined());
      CHECK(rule["annotations"]["description"].IsDefined());
      CHECK(alerts.emplace(alert, expr).second);
      std::set<std::string> names = MetricNames(expr);
      CHECK_MESSAGE(!names.empty(), "no metric in: " << expr);
      for (const std::string& name : names) {
        CheckExported(node_group ? node : m, name, "alert " + alert + ": " + expr);
        rule_names.insert(name);
      }
    }
  }
  for (const char* want : {"TopofitDown", "TopofitExtenderErrors", "TopofitVerbLatencyNearTimeout",
                           "TopofitWatchDisconnected", "TopofitNodeTopologyUnknown", "TopofitNodeDown",
                           "TopofitNodeNotReady", "TopofitNodePlanMismatches", "TopofitNodePlanFallbacks",
                           "TopofitGpuModelShort", "TopofitGroupWaitingForRoom"}) {
    CAPTURE(std::string(want));
    CHECK(alerts.count(want) == 1);
  }
  for (const char* want : {"up", "topofit_request_errors_total", "topofit_request_duration_seconds_bucket",
                           "topofit_watch_connected", "topofit_node_topology_source", "topofit_node_ready",
                           "topofit_node_plan_mismatches_total", "topofit_node_preferred_allocations_total",
                           "topofit_gpu_model_shortfall_gpus"}) {
    CAPTURE(std::string(want));
    CHECK(rule_names.count(want) == 1);
  }

  // The latency alert fires at half of each extender entry's httpTimeout (one "> X" per entry), and
  // the histogram has a bucket at each bound, so the p99 can read above it.
  YAML::Node sched = YAML::Load(Source("manifests/base/scheduler-config.yaml"));
  const std::string& latency = alerts["TopofitVerbLatencyNearTimeout"];
  CHECK(latency.find("histogram_quantile(0.99") != std::string::npos);
  std::set<double> thresholds;
  for (size_t gt = latency.find('>'); gt != std::string::npos; gt = latency.find('>', gt + 1)) {
    thresholds.insert(std::strtod(latency.c_str() + gt + 1, nullptr));
  }
  REQUIRE(sched["extenders"].size() >= 1);
  for (const YAML::Node& entry : sched["extenders"]) {
    auto timeout = topofit::ParseDuration(entry["httpTimeout"].as<std::string>());
    REQUIRE(timeout.ok());
    double half = std::chrono::duration<double>(*timeout).count() / 2;
    CAPTURE(half);
    CHECK(thresholds.count(half) == 1);
    char le[32];
    std::snprintf(le, sizeof le, "%g", half);  // As the server prints bucket bounds: 0.5, 2.5, 5, 10.
    CHECK(m.text.find("topofit_request_duration_seconds_bucket{verb=\"filter\",le=\"" + std::string(le) + "\"}") !=
          std::string::npos);
  }
  CHECK(thresholds.size() == sched["extenders"].size());
}

TEST_CASE("monitoring: the PromQL metric-name reader") {
  using Names = std::set<std::string>;
  CHECK(MetricNames("up") == Names{"up"});
  CHECK(MetricNames(R"(sum by (verb, le) (rate(topofit_request_duration_seconds_bucket{verb=~"f.*"}[$__rate_interval])))") ==
        Names{"topofit_request_duration_seconds_bucket"});
  CHECK(MetricNames("histogram_quantile(0.99, sum by (verb, le) (rate(a_bucket[5m]))) > 2.5") == Names{"a_bucket"});
  CHECK(MetricNames(R"(max(up{service="x"}) == 0 or absent(up{service="x"}))") == Names{"up"});
  CHECK(MetricNames("a / on(instance) group_left(node, pod) b unless c offset 5m") == Names{"a", "b", "c"});
  CHECK(MetricNames(R"(count by (source) (max by (node, source) (s{source=~"gfd-labels|x"})) == bool 1e3)") ==
        Names{"s"});
  CHECK(MetricNames("topk by (node) (3, x:recorded:rate5m)") == Names{"x:recorded:rate5m"});
  CHECK(MetricNames("2 * 3.5") == Names{});
}

}  // namespace
