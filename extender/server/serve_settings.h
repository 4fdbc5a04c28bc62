#pragma once
// The settings of `topofit serve`, each declared once in one table: its --config key, its flag, its
// help, how its value is read into ServeSettings and how it is shown (its default, in --help and in
// the README). A setting may have a key, a flag, or both; both read the same way, so they cannot
// drift. `topofit serve` applies the defaults, then the --config file, then every flag given on the
// command line (a flag wins over the file).
//
// Contract: values are read as YAML scalars (a flag's text is the scalar), so `threads: 8` and
// `--threads 8` accept the same text and give the same setting. A value that does not read is an
// Error naming the key or flag and the text; an unknown key is ServeConfig's business
// (serve_config.h). Nothing here throws.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/server/serve_config.h"

namespace YAML {
class Node;
}

namespace topofit::server {

// What `topofit serve` is told beyond ServeConfig: where the cluster comes from (the embedded demo
// cluster, a snapshot file, or the API server) and what it records. Flags only.
struct ServeSource {
  std::string config_file;  // --config
  std::string snapshot;
  std::string record;
  std::string kubeconfig;  // Live mode: list+watch the API server, bind through it.
  std::string context;
  bool in_cluster = false;
  // Client-side rate limit and list page size; the defaults are apiclient's (ApiClientOptions,
  // LiveOptions), which serve_flags_test.cc checks.
  double kube_api_qps = 500;
  int kube_api_burst = 1000;
  int kube_api_list_limit = 500;
};

struct ServeSettings {
  ServeConfig config;
  ServeSource source;
};

struct ServeSetting {
  std::string_view key;    // In the --config YAML ("scoring.levels" is `levels` under `scoring`); "": a flag only.
  std::string_view flag;   // "--listen"; "": --config only.
  std::string_view value;  // What the value is, for --help ("ADDR:PORT"); "": a switch (--x, --x=false).
  std::string_view help;
  // Reads `v` into the settings; `where` names the source in errors ("config threads", "--threads").
  Status (*read)(const YAML::Node& v, std::string_view where, ServeSettings& s);
  // The setting's value as text that `read` reads back ("" for an unset file, "0.0.0.0:8888").
  std::string (*show)(const ServeSettings& s);
};

// Every setting, in the order --help and the README list them.
std::span<const ServeSetting> ServeSettingsTable();
// The row of a flag or a key; nullptr when there is none.
const ServeSetting* FindServeFlag(std::string_view flag);
const ServeSetting* FindServeKey(std::string_view key);

// Reads a YAML value of `setting` (from --config) into `s`; YAML errors are "config: line N: ...".
Status ReadSettingYaml(const ServeSetting& setting, const YAML::Node& v, ServeSettings& s);
// Reads a flag's text into `s`: "--threads 'x': bad conversion" when it does not read.
Status ReadSettingFlag(const ServeSetting& setting, const std::string& text, ServeSettings& s);

// A flag given on the command line, with its text ("true"/"false" for a switch).
struct GivenFlag {
  const ServeSetting* setting;
  std::string text;
};
// The settings `topofit serve` runs with: the defaults, then the --config file among `given`, then
// every flag of `given` in order over it.
Result<ServeSettings> ResolveServeSettings(std::span<const GivenFlag> given);

// The README's list of the settings: a Markdown table, one row per setting.
std::string ServeSettingsMarkdown();

}  // namespace topofit::server
