#include "extender/cli/serve_flags.h"

#include <fmt/format.h>

namespace topofit::cli {
namespace {

std::string FlagHelp(const server::ServeSetting& s) {
  return s.key.empty() ? std::string(s.help) : fmt::format("{} (config: {})", s.help, s.key);
}

}  // namespace

ServeFlags::ServeFlags(CLI::App& sub) {
  const server::ServeSettings defaults;
  for (const server::ServeSetting& s : server::ServeSettingsTable()) {
    if (s.flag.empty()) continue;
    Bound& b = bound_.emplace_back();
    b.setting = &s;
    if (s.value.empty()) {
      b.option = sub.add_flag(std::string(s.flag), b.on, FlagHelp(s));
      continue;
    }
    b.option = sub.add_option(std::string(s.flag), b.text, FlagHelp(s))->type_name(std::string(s.value));
    if (std::string shown = s.show(defaults); !shown.empty()) b.option->default_str(shown);
  }
  sub.footer(ConfigOnlyHelp());
}

std::vector<server::GivenFlag> ServeFlags::Given() const {
  std::vector<server::GivenFlag> given;
  for (const Bound& b : bound_) {
    if (b.option->count() == 0) continue;
    given.push_back({b.setting, b.setting->value.empty() ? (b.on ? "true" : "false") : b.text});
  }
  return given;
}

std::string ConfigOnlyHelp() {
  const server::ServeSettings defaults;
  std::string out = "Only in a --config file (YAML; a dotted key is nested: scoring: {levels: absolute}):\n";
  for (const server::ServeSetting& s : server::ServeSettingsTable()) {
    if (!s.flag.empty()) continue;
    // As CLI11 lists the options: the name, its value and default, then the help from column 30.
    std::string name = fmt::format("{} {}={}", s.key, s.value.empty() ? "BOOL" : s.value, s.show(defaults));
    if (name.size() < 28) out += fmt::format("  {:<28}{}\n", name, s.help);
    else out += fmt::format("  {}\n{:30}{}\n", name, "", s.help);
  }
  return out;
}

}  // namespace topofit::cli
