#pragma once
// Result<T>: a value or an error message, returned across layers instead of throwing.
//
// Contract: exactly one of value() / error() is meaningful; ok() says which. Calling value() on an
// error (or error() on a value) is a programming error and asserts. Errors are plain text meant for
// a human ("line 4, column 17: expected a link class (X, SYS, NODE, PHB, PXB, PIX, NV#), got 'NVX'").

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace topofit {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T& value() & { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const std::string& error() const { assert(!ok()); return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

// Status: a Result with no value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), ok_(false) {}  // NOLINT
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
  bool ok_ = true;
};

}  // namespace topofit
