// The settings table of `topofit serve`: every setting reads an example value alike from --config and
// from its flag (and changes only itself), flags win over the file, the README lists the table as it
// is, and the flags and config files that ship (manifests/, bench/results/) are the table's.
#include "extender/server/serve_settings.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/files.h"
#include "test/util/temp_dir.h"

namespace topofit::server {
namespace {

// An example of each setting (by key, else by flag), in the form `show` prints, unlike its default.
const std::map<std::string, std::string, std::less<>> kExamples = {
    {"listen", "127.0.0.1:9000"},
    {"opsListen", "127.0.0.1:9001"},
    {"urlPrefix", "/ext"},
    {"--snapshot", "/s.json"},
    {"--record", "/r.jsonl"},
    {"--config", "/c.yaml"},
    {"maxBodyBytes", "1024"},
    {"threads", "8"},
    {"keepAlive", "30s"},
    {"readTimeout", "2s"},
    {"writeTimeout", "3s"},
    {"requestTimeout", "4s"},
    {"maxConnections", "100"},
    {"maxBufferedBytes", "1048576"},
    {"maxConcurrentQueries", "2"},
    {"maxQueryBodyBytes", "4096"},
    {"--kubeconfig", "/kc"},
    {"--context", "dev"},
    {"--kube-api-qps", "2.5"},
    {"--kube-api-burst", "7"},
    {"--kube-api-list-limit", "0"},
    {"filterKeepsBest", "true"},
    {"tlsCertFile", "/t.crt"},
    {"tlsPrivateKeyFile", "/t.key"},
    {"clientCAFile", "/ca.crt"},
    {"--in-cluster", "true"},
    {"tlsReloadInterval", "250ms"},
    {"reservationTTL", "45s"},
    {"bindEvents", "all"},
    {"groupLevels", "[{name: rack, labels: [example.com/rack]}, {name: host, labels: [kubernetes.io/hostname]}]"},
    {"scoring.weights", "{Packing: 0.5, SetQuality: 2}"},
    {"scoring.levels", "absolute"},
    {"scoring.tieBreak", "pack"},
    {"scoring.interconnectRate", ".inf"},
    {"scoring.workloadHalfLife", "500"},
    {"scoring.podsWithoutGpus", "true"},
    {"scoring.domainLoss", "false"},
    {"scoring.requestMix", "[{size: 2, weight: 3}, {size: 8, weight: 1}]"},
};

std::string NameOf(const ServeSetting& s) { return std::string(s.key.empty() ? s.flag : s.key); }

// "scoring.levels", "absolute" -> "scoring:\n  levels: absolute\n".
std::string YamlOf(std::string_view key, const std::string& value) {
  std::string out, indent;
  for (size_t dot; (dot = key.find('.')) != std::string_view::npos; key.remove_prefix(dot + 1)) {
    out += indent + std::string(key.substr(0, dot)) + ":\n";
    indent += "  ";
  }
  return out + indent + std::string(key) + ": " + value + "\n";
}

// Every setting's shown value, but `except`'s.
std::map<std::string, std::string> ShowAll(const ServeSettings& s, const ServeSetting* except) {
  std::map<std::string, std::string> out;
  for (const ServeSetting& row : ServeSettingsTable())
    if (&row != except) out[NameOf(row)] = row.show(s);
  return out;
}

TEST_CASE("serve settings: each reads its example from --config and from its flag alike, and changes only itself") {
  const ServeSettings defaults;
  std::set<std::string> names;
  for (const ServeSetting& s : ServeSettingsTable()) {
    const std::string name = NameOf(s);
    CAPTURE(name);
    CHECK(names.insert(name).second);
    CHECK_FALSE(s.help.empty());
    CHECK(s.help.find('|') == std::string_view::npos);  // A cell of the README's table.
    CHECK((s.flag.empty() || s.flag.starts_with("--")));
    auto example = kExamples.find(name);
    REQUIRE_MESSAGE(example != kExamples.end(), "no example for the new setting " << name);
    CHECK(s.show(defaults) != example->second);
    const ServeSettings* from_yaml = nullptr;
    ServeSettings yaml;
    if (!s.key.empty()) {
      Status st = ApplyConfigYaml(YamlOf(s.key, example->second), yaml.config);
      REQUIRE_MESSAGE(st.ok(), st.error());
      CHECK(s.show(yaml) == example->second);
      CHECK(ShowAll(yaml, &s) == ShowAll(defaults, &s));
      from_yaml = &yaml;
    }
    if (!s.flag.empty()) {
      ServeSettings flag;
      Status st = ReadSettingFlag(s, example->second, flag);
      REQUIRE_MESSAGE(st.ok(), st.error());
      CHECK(s.show(flag) == example->second);
      CHECK(ShowAll(flag, &s) == ShowAll(defaults, &s));
      if (from_yaml) CHECK(ShowAll(flag, nullptr) == ShowAll(*from_yaml, nullptr));
    }
    CHECK((FindServeKey(s.key) == &s || s.key.empty()));
    CHECK((FindServeFlag(s.flag) == &s || s.flag.empty()));
  }
  CHECK(names.size() == kExamples.size());
}

TEST_CASE("serve settings: the eighteen shared by a flag and a key, and what each has alone") {
  std::vector<std::string> both, flag_only, key_only;
  for (const ServeSetting& s : ServeSettingsTable()) {
    if (!s.key.empty() && !s.flag.empty()) both.push_back(std::string(s.flag));
    else if (s.key.empty()) flag_only.push_back(std::string(s.flag));
    else key_only.push_back(std::string(s.key));
  }
  CHECK(both == std::vector<std::string>{"--listen", "--ops-listen", "--url-prefix", "--max-body-bytes", "--threads",
                                         "--keep-alive", "--read-timeout", "--write-timeout", "--request-timeout",
                                         "--max-connections", "--max-buffered-bytes", "--max-concurrent-queries",
                                         "--max-query-body-bytes", "--filter-keeps-best", "--tls-cert-file", "--tls-private-key-file",
                                         "--client-ca-file", "--bind-events"});
  CHECK(flag_only == std::vector<std::string>{"--snapshot", "--record", "--config", "--kubeconfig", "--context",
                                              "--kube-api-qps", "--kube-api-burst", "--kube-api-list-limit",
                                              "--in-cluster"});
  CHECK(key_only == std::vector<std::string>{"tlsReloadInterval", "reservationTTL", "groupLevels", "scoring.weights",
                                             "scoring.levels", "scoring.tieBreak", "scoring.interconnectRate",
                                             "scoring.workloadHalfLife", "scoring.podsWithoutGpus", "scoring.domainLoss",
                                             "scoring.requestMix"});
}

TEST_CASE("serve settings: the defaults are the structs' own") {
  const ServeSettings d;
  auto show = [&](std::string_view name) {
    const ServeSetting* s = name.starts_with("--") ? FindServeFlag(name) : FindServeKey(name);
    REQUIRE(s != nullptr);
    return s->show(d);
  };
  CHECK(show("listen") == "0.0.0.0:8888");
  CHECK(show("opsListen") == "");
  CHECK(show("urlPrefix") == "/scheduler");
  CHECK(show("maxBodyBytes") == "67108864");
  CHECK(show("threads") == "0");
  // The listener limits: ListenerOptions' and HttpServer's named defaults (docs/hostile-input.md).
  CHECK(show("keepAlive") == FormatDuration(std::chrono::seconds(kDefaultKeepAliveSeconds)));
  CHECK(show("keepAlive") == "1m30s");
  CHECK(show("readTimeout") == "10s");
  CHECK(show("writeTimeout") == "10s");
  CHECK(show("requestTimeout") == "10s");
  CHECK(show("maxConnections") == std::to_string(kDefaultMaxConnections));
  CHECK(show("maxBufferedBytes") == std::to_string(kDefaultMaxBufferedBytes));
  CHECK(show("maxConcurrentQueries") == std::to_string(kDefaultMaxConcurrentQueries));
  CHECK(show("maxQueryBodyBytes") == std::to_string(kDefaultMaxQueryBodyBytes));
  const ListenerOptions listener;
  CHECK(d.config.server.read_timeout_seconds == listener.read_timeout_seconds);
  CHECK(d.config.server.write_timeout_seconds == listener.write_timeout_seconds);
  CHECK(d.config.server.request_timeout_seconds == listener.request_timeout_seconds);
  CHECK(d.config.server.keep_alive_seconds == listener.keep_alive_seconds);
  CHECK(d.config.server.max_connections == listener.max_connections);
  CHECK(d.config.server.max_buffered_bytes == listener.max_buffered_bytes);
  CHECK(show("filterKeepsBest") == "false");
  CHECK(show("tlsReloadInterval") == "10s");
  CHECK(show("reservationTTL") == "30s");
  CHECK(show("scoring.weights") == "{FragmentationGradient: 1, SetQuality: 1}");
  CHECK(show("scoring.levels") == "relative");
  CHECK(show("scoring.tieBreak") == "fit-then-pack");
  CHECK(show("scoring.interconnectRate") == "4");
  CHECK(show("scoring.workloadHalfLife") == "2000");
  CHECK(show("scoring.requestMix") == "[{size: 1, weight: 1}, {size: 2, weight: 1}, {size: 4, weight: 1}, {size: 8, weight: 1}]");
  CHECK(show("--kube-api-qps") == "500");
  CHECK(show("--kube-api-burst") == "1000");
  CHECK(show("--kube-api-list-limit") == "500");
  CHECK(show("--in-cluster") == "false");
}

TEST_CASE("serve settings: the interconnect rate is a number >= 0 or .inf") {
  const ServeSetting* rate = FindServeKey("scoring.interconnectRate");
  REQUIRE(rate != nullptr);
  ServeSettings s;
  CHECK(ReadSettingYaml(*rate, YAML::Load("0.5"), s).ok());
  CHECK(s.config.pipeline.interconnect_rate == 0.5);
  CHECK(ReadSettingYaml(*rate, YAML::Load(".inf"), s).ok());
  CHECK(std::isinf(s.config.pipeline.interconnect_rate));
  CHECK(rate->show(s) == ".inf");
  Status negative = ReadSettingYaml(*rate, YAML::Load("-1"), s);
  REQUIRE(!negative.ok());
  CHECK(negative.error().find("not a rate >= 0") != std::string::npos);
  CHECK(!ReadSettingYaml(*rate, YAML::Load(".nan"), s).ok());
  CHECK(!ReadSettingYaml(*rate, YAML::Load("fast"), s).ok());
}

TEST_CASE("serve settings: flags win over the --config file, which wins over the defaults") {
  testing::TempDir dir;
  std::string config = dir.Write("serve.yaml", "threads: 4\nurlPrefix: /a\nlisten: 127.0.0.1:7000\n");
  const std::vector<GivenFlag> given = {{FindServeFlag("--threads"), "9"}, {FindServeFlag("--config"), config},
                                        {FindServeFlag("--filter-keeps-best"), "true"}};
  auto s = ResolveServeSettings(given);
  REQUIRE_MESSAGE(s.ok(), s.error());
  CHECK(s->config.server.threads == 9);
  CHECK(s->config.server.url_prefix == "/a");
  CHECK(s->config.server.host == "127.0.0.1");
  CHECK(s->config.server.port == 7000);
  CHECK(s->config.pipeline.filter_keeps_best);
  CHECK(s->source.config_file == config);

  auto bad_file = ResolveServeSettings(std::vector<GivenFlag>{{FindServeFlag("--config"), dir.Write("bad.yaml", "thread: 4\n")}});
  REQUIRE_FALSE(bad_file.ok());
  CHECK(bad_file.error() == dir.File("bad.yaml") + ": config: unknown key 'thread'");
  auto missing = ResolveServeSettings(std::vector<GivenFlag>{{FindServeFlag("--config"), dir.File("none.yaml")}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() == "--config: cannot open " + dir.File("none.yaml") + ": No such file or directory");
}

TEST_CASE("serve settings: a flag that does not read names itself and its text, and an address may be [v6]") {
  ServeSettings s;
  CHECK(ReadSettingFlag(*FindServeFlag("--threads"), "many", s).error() == "--threads 'many': bad conversion");
  CHECK(ReadSettingFlag(*FindServeFlag("--filter-keeps-best"), "sometimes", s).error() ==
        "--filter-keeps-best 'sometimes': bad conversion");
  CHECK(ReadSettingFlag(*FindServeFlag("--kube-api-burst"), "0", s).error() == "--kube-api-burst '0': not a number > 0");
  CHECK(ReadSettingFlag(*FindServeFlag("--kube-api-qps"), "-1", s).error() == "--kube-api-qps '-1': not a number >= 0");
  CHECK(ReadSettingFlag(*FindServeFlag("--kube-api-list-limit"), "-5", s).error() ==
        "--kube-api-list-limit '-5': not a number >= 0");
  CHECK(ReadSettingFlag(*FindServeFlag("--listen"), "8888", s).error() == "--listen '8888': expected ADDR:PORT");
  CHECK(ReadSettingFlag(*FindServeFlag("--read-timeout"), "1500ms", s).error() ==
        "--read-timeout '1500ms': not a whole number of seconds from 1s to 24h");
  CHECK(ReadSettingFlag(*FindServeFlag("--keep-alive"), "25h", s).error() ==
        "--keep-alive '25h': not a whole number of seconds from 1s to 24h");
  CHECK(ReadSettingFlag(*FindServeFlag("--keep-alive"), "0s", s).error().starts_with("--keep-alive: invalid duration '0s'"));
  CHECK(ReadSettingFlag(*FindServeFlag("--request-timeout"), "soon", s).error().starts_with("--request-timeout: "));
  REQUIRE(ReadSettingFlag(*FindServeFlag("--write-timeout"), "2m", s).ok());
  CHECK(s.config.server.write_timeout_seconds == 120);
  REQUIRE(ReadSettingFlag(*FindServeFlag("--read-timeout"), "7", s).ok());  // A number of seconds.
  CHECK(s.config.server.read_timeout_seconds == 7);
  CHECK(ReadSettingFlag(*FindServeFlag("--max-connections"), "0", s).error() == "--max-connections '0': not a number > 0");
  CHECK(ReadSettingFlag(*FindServeFlag("--max-concurrent-queries"), "-1", s).error() ==
        "--max-concurrent-queries '-1': not a number > 0");
  CHECK(ReadSettingFlag(*FindServeFlag("--ops-listen"), "nope", s).error() == "ops --listen 'nope': expected ADDR:PORT");
  REQUIRE(ReadSettingFlag(*FindServeFlag("--ops-listen"), "", s).ok());  // Off again.
  CHECK(s.config.server.ops_port == -1);
  REQUIRE(ReadSettingFlag(*FindServeFlag("--ops-listen"), "[::1]:9001", s).ok());
  CHECK(s.config.server.ops_host == "::1");
  CHECK(FindServeFlag("--ops-listen")->show(s) == "[::1]:9001");
}

TEST_CASE("serve config: nested keys, unknown keys, and a dotted key at the top") {
  ServeConfig cfg;
  CHECK(ApplyConfigYaml("scoring:\n  level: absolute\n", cfg).error() == "config: unknown key scoring.level");
  CHECK(ApplyConfigYaml("scoring.levels: absolute\n", cfg).error() == "config: unknown key 'scoring.levels'");
  CHECK(ApplyConfigYaml("- listen\n", cfg).error() == "config: expected a mapping at the top");
  CHECK(ApplyConfigYaml("", cfg).ok());
  CHECK(ApplyConfigYaml("scoring:\n", cfg).ok());
  CHECK(ApplyConfigYaml("scoring:\n  weights: {Nope: 1}\n", cfg).error().find("Nope") != std::string::npos);
}

// The `- --flag[=value]` lines after `- serve` in a manifest (lines of Helm templating skipped).
std::vector<std::string> ServeArgsIn(const std::string& manifest) {
  std::vector<std::string> args;
  std::istringstream in(manifest);
  bool on = false;
  for (std::string line; std::getline(in, line);) {
    std::string t = line.substr(std::min(line.size(), line.find_first_not_of(' ')));
    if (t == "- serve") on = true;
    else if (on && t.starts_with("{{")) continue;
    else if (on && t.starts_with("- --")) args.push_back(t.substr(2));
    else on = false;
  }
  return args;
}

TEST_CASE("serve settings: the flags of the shipped manifests and the shipped config files read") {
  int flags = 0;
  for (const char* path : {"manifests/base/scheduler-deployment.yaml", "manifests/helm/topofit/templates/scheduler-deployment.yaml",
                           "manifests/helm/topofit/templates/extender-deployment.yaml"}) {
    auto text = ReadFile(std::string(TOPOFIT_SOURCE_DIR) + "/" + path);
    REQUIRE(text.ok());
    for (const std::string& arg : ServeArgsIn(*text)) {
      CAPTURE(path);
      CAPTURE(arg);
      ++flags;
      size_t eq = arg.find('=');
      const ServeSetting* s = FindServeFlag(arg.substr(0, eq));
      REQUIRE(s != nullptr);
      if (arg.find("{{") != std::string::npos) continue;
      ServeSettings settings;
      CHECK(ReadSettingFlag(*s, eq == std::string::npos ? "true" : arg.substr(eq + 1), settings).ok());
    }
  }
  CHECK(flags >= 12);
  ServeConfig cfg;
  Status st = ApplyConfigFile(std::string(TOPOFIT_SOURCE_DIR) + "/bench/results/all-pods.yaml", cfg);
  CHECK_MESSAGE(st.ok(), st.error());
  CHECK(cfg.pipeline.score_pods_without_gpus);
}

TEST_CASE("serve settings: the README lists the table as it is") {
  auto readme = ReadFile(std::string(TOPOFIT_SOURCE_DIR) + "/README.md");
  REQUIRE(readme.ok());
  const std::string table = ServeSettingsMarkdown();
  CHECK(table.starts_with("| config key | flag | default | meaning |\n"));
  CHECK(table.find("| `listen` | `--listen` | `0.0.0.0:8888` |") != std::string::npos);
  CHECK_MESSAGE(readme->find(table) != std::string::npos,
                "README.md's table of serve settings differs from ServeSettingsMarkdown(); put this in it:\n"
                    << table);
}

}  // namespace
}  // namespace topofit::server

namespace topofit::server {
namespace {

TEST_CASE("serve settings: groupLevels names the network levels groups are placed in, checked as a hierarchy") {
  ServeConfig cfg;
  CHECK(cfg.group_levels == groups::DomainLevels::Defaults());
  const ServeSetting* row = FindServeKey("groupLevels");
  REQUIRE(row != nullptr);
  CHECK(row->show(ServeSettings{}).starts_with("[{name: datacenter, labels: [network.topology.nvidia.com/datacenter"));
  REQUIRE(ApplyConfigYaml("groupLevels:\n- {name: rack, labels: [example.com/rack]}\n"
                          "- {name: host, labels: [kubernetes.io/hostname]}\n", cfg).ok());
  REQUIRE(cfg.group_levels.size() == 2);
  CHECK(cfg.group_levels.levels[0].name == "rack");
  CHECK(cfg.group_levels.levels[0].keys == std::vector<std::string>{"example.com/rack"});
  // What is shown reads back to the same levels.
  ServeConfig again;
  REQUIRE(ApplyConfigYaml("groupLevels: " + row->show(ServeSettings{cfg, {}}) + "\n", again).ok());
  CHECK(again.group_levels == cfg.group_levels);
  CHECK(ApplyConfigYaml("groupLevels: [{name: rack}]\n", cfg).error() ==
        "config groupLevels: every level is {name: LEVEL, labels: [KEY, ...]}");
  CHECK_FALSE(ApplyConfigYaml("groupLevels: [{name: a, labels: [x]}, {name: a, labels: [y]}]\n", cfg).ok());
  CHECK_FALSE(ApplyConfigYaml("groupLevels: block\n", cfg).ok());
}

}  // namespace

TEST_CASE("serve settings: bindEvents says which binds also write a GPUsAssigned Event") {
  ServeConfig cfg;
  CHECK(cfg.bind_events == BindEvents::kNotable);
  REQUIRE(ApplyConfigYaml("bindEvents: all\n", cfg).ok());
  CHECK(cfg.bind_events == BindEvents::kAll);
  REQUIRE(ApplyConfigYaml("bindEvents: notable\n", cfg).ok());
  CHECK(cfg.bind_events == BindEvents::kNotable);
  CHECK(ApplyConfigYaml("bindEvents: some\n", cfg).error() == "config bindEvents: 'some' is not notable or all");
}

}  // namespace topofit::server
