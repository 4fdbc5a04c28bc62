#pragma once
// OpenSslError: the text of the oldest error on this thread's OpenSSL error queue, which it then clears;
// "unknown OpenSSL error" when the queue is empty. Header-only: its users already link OpenSSL, base/
// does not.

#include <openssl/err.h>

#include <string>

namespace topofit {

inline std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

}  // namespace topofit
