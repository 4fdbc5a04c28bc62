#pragma once
// For tests that read a /metrics body (base/prometheus.h's text exposition): the value of one series.

#include <string>
#include <string_view>

namespace topofit::testing {

// The value of `series` ("name" or "name{labels}", exactly as rendered) on a line of `text` that
// starts with it; -1 when no line does.
inline double SampleValue(std::string_view text, std::string_view series) {
  const std::string prefix = std::string(series) + " ";
  for (size_t at = 0; (at = text.find(prefix, at)) != std::string_view::npos; at += prefix.size()) {
    if (at == 0 || text[at - 1] == '\n') return std::stod(std::string(text.substr(at + prefix.size())));
  }
  return -1;
}

}  // namespace topofit::testing
