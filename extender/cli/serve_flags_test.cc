// The command line of `topofit serve` is the settings table's: every flag parses through CLI11 into
// the setting its row reads (a switch alone is true, `=false` turns it off), the help lists every
// setting with its default, and the defaults of the API client's flags are apiclient's own.
#include "extender/cli/serve_flags.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "extender/apiclient/live_cluster.h"
#include "test/util/temp_dir.h"

namespace topofit::cli {
namespace {

// Parses `topofit serve args...` and resolves the settings.
Result<server::ServeSettings> Parse(std::vector<std::string> args) {
  CLI::App app{"test"};
  CLI::App* sub = app.add_subcommand("serve");
  ServeFlags flags(*sub);
  args.insert(args.begin(), "serve");
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector of arguments in reverse.
  app.parse(args);
  return server::ResolveServeSettings(flags.Given());
}

TEST_CASE("serve flags: each flag of the table parses into its setting") {
  const std::vector<std::pair<std::string, std::string>> examples = {
      {"--listen", "127.0.0.1:9000"}, {"--ops-listen", "127.0.0.1:9001"}, {"--url-prefix", "/ext"},
      {"--snapshot", "/s.json"},      {"--record", "/r.jsonl"},           {"--max-body-bytes", "1024"},
      {"--threads", "8"},             {"--kubeconfig", "/kc"},            {"--context", "dev"},
      {"--kube-api-qps", "2.5"},      {"--kube-api-burst", "7"},          {"--kube-api-list-limit", "0"},
      {"--tls-cert-file", "/t.crt"},  {"--tls-private-key-file", "/t.key"}, {"--client-ca-file", "/ca.crt"},
      {"--keep-alive", "30s"},        {"--read-timeout", "2s"},           {"--write-timeout", "3s"},
      {"--request-timeout", "4s"},    {"--max-connections", "100"},       {"--max-buffered-bytes", "1048576"},
      {"--max-concurrent-queries", "2"}, {"--max-query-body-bytes", "4096"}, {"--bind-events", "all"},
  };
  int flags = 0;
  for (const server::ServeSetting& s : server::ServeSettingsTable()) {
    if (s.flag.empty() || s.flag == "--config") continue;
    ++flags;
    CAPTURE(s.flag);
    if (s.value.empty()) {  // A switch.
      auto on = Parse({std::string(s.flag)});
      REQUIRE_MESSAGE(on.ok(), on.error());
      CHECK(s.show(*on) == "true");
      auto off = Parse({std::string(s.flag) + "=false"});
      REQUIRE_MESSAGE(off.ok(), off.error());
      CHECK(s.show(*off) == "false");
      continue;
    }
    std::string example;
    for (const auto& [flag, value] : examples)
      if (flag == s.flag) example = value;
    REQUIRE_MESSAGE(!example.empty(), "no example for " << s.flag);
    auto spaced = Parse({std::string(s.flag), example});
    REQUIRE_MESSAGE(spaced.ok(), spaced.error());
    CHECK(s.show(*spaced) == example);
    auto joined = Parse({std::string(s.flag) + "=" + example});
    REQUIRE_MESSAGE(joined.ok(), joined.error());
    CHECK(s.show(*joined) == example);
  }
  CHECK(flags == 26);
}

TEST_CASE("serve flags: --config is read, and the flags given win over it") {
  testing::TempDir dir;
  std::string config = dir.Write("serve.yaml", "threads: 4\nfilterKeepsBest: true\nscoring:\n  levels: absolute\n");
  auto s = Parse({"--config", config, "--threads", "9", "--filter-keeps-best=false"});
  REQUIRE_MESSAGE(s.ok(), s.error());
  CHECK(s->config.server.threads == 9);
  CHECK_FALSE(s->config.pipeline.filter_keeps_best);
  CHECK_FALSE(s->config.pipeline.relative_levels);
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  CHECK(defaults->config.server.port == 8888);
  CHECK(defaults->source.config_file.empty());
}

TEST_CASE("serve flags: --help lists every setting, with its default") {
  CLI::App app{"test"};
  CLI::App* sub = app.add_subcommand("serve");
  ServeFlags flags(*sub);
  const std::string help = sub->help();
  const server::ServeSettings defaults;
  for (const server::ServeSetting& s : server::ServeSettingsTable()) {
    CAPTURE(s.help);
    CHECK(help.find(s.flag.empty() ? std::string(s.key) + " " : std::string(s.flag)) != std::string::npos);
    CHECK(help.find(s.help) != std::string::npos);
    if (!s.show(defaults).empty() && !s.value.empty())
      CHECK(help.find(std::string(s.value) + "=" + s.show(defaults)) != std::string::npos);
    if (!s.key.empty() && !s.flag.empty()) CHECK(help.find("(config: " + std::string(s.key) + ")") != std::string::npos);
  }
}

TEST_CASE("serve flags: the API client's defaults are apiclient's") {
  const server::ServeSource source;
  const apiclient::LiveOptions live;
  CHECK(source.kube_api_qps == live.api.qps);
  CHECK(source.kube_api_burst == live.api.burst);
  CHECK(source.kube_api_list_limit == live.watch.page_size);
}

}  // namespace
}  // namespace topofit::cli
