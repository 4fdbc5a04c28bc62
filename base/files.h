#pragma once
// ReadFile: a whole file as bytes, the one file reader of topofit.
//
// Contract: reads in binary mode (no newline translation). A missing or unreadable file, or a
// directory, is an Error "cannot open PATH: REASON" (or "cannot read PATH: REASON" when opening worked
// and reading failed); an empty file is an empty string, not an error.
// ParseFile: ReadFile, then a parser of the text; the parser's Error becomes "PATH: ERROR".
// Thread-safe (no shared state).

#include <string>

#include "base/status.h"

namespace topofit {

Result<std::string> ReadFile(const std::string& path);

// `parse(text)` of the file's text, a Result<T>; ReadFile's errors as they are, the parser's prefixed
// with the path.
template <typename Parse>
auto ParseFile(const std::string& path, Parse&& parse) -> decltype(parse(std::string())) {
  auto text = ReadFile(path);
  if (!text) return Error{text.error()};
  auto parsed = parse(*text);
  if (!parsed) return Error{path + ": " + parsed.error()};
  return parsed;
}

}  // namespace topofit
