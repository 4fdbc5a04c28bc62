#pragma once
// ReadFile: a whole file as bytes, the one file reader of topofit.
//
// Contract: reads in binary mode (no newline translation). A missing or unreadable file, or a
// directory, is an Error "cannot open PATH: REASON" (or "cannot read PATH: REASON" when opening worked
// and reading failed); an empty file is an empty string, not an error.

#include <string>

#include "base/status.h"

namespace topofit {

Result<std::string> ReadFile(const std::string& path);

}  // namespace topofit
