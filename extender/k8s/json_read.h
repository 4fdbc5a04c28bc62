#pragma once
// Helpers for the simdjson DOM decoders of this directory (k8s-internal).
//
// Why DOM and not On-Demand: the Debian libsimdjson dispatches DOM parsing at run time to the best
// SIMD kernel of the CPU, while On-Demand is compiled for the build's baseline (the slow fallback
// kernel on plain x86-64). DOM also validates the whole document, which malformed-input handling
// wants anyway.
//
// Decoders match object keys ASCII-case-insensitively (Go's encoding/json does, and the scheduler's
// own tests lower-case whole documents). Inside a decoder, failures throw DecodeError; the public
// Decode* functions catch it (and simdjson_error) at their boundary and return an Error, so nothing
// throws past this directory. Path names the field being read and only becomes text on failure.

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace topofit::k8s::json {

namespace dom = simdjson::dom;

struct DecodeError {
  std::string message;
};

struct Path {
  const Path* parent = nullptr;
  std::string_view name;  // Field name; empty for an array element.
  int index = -1;         // Array index, or -1.
  Path Field(std::string_view n) const { return Path{this, n, -1}; }
  Path Index(int i) const { return Path{this, {}, i}; }
  std::string str() const;
};

[[noreturn]] void Fail(const Path& path, std::string_view what);

inline bool KeyIs(std::string_view key, std::string_view want) {
  if (key.size() != want.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    char a = key[i], b = want[i];
    if (a >= 'A' && a <= 'Z') a = char(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = char(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

inline bool IsNull(dom::element v) { return v.type() == dom::element_type::NULL_VALUE; }
// Kubernetes object fields: a string; null gives ""; a number or bool (hand-written YAML) its text.
std::string String(dom::element v, const Path& path);
// Extender protocol fields: a JSON string or null ("") only.
std::string_view StrictString(dom::element v, const Path& path);
std::string ScalarText(dom::element v, const Path& path);  // string, number or bool as text.
int64_t Int(dom::element v, const Path& path);             // JSON integer; null gives 0.
bool Bool(dom::element v, const Path& path);               // null gives false.
void StringMap(dom::element v, const Path& path, std::map<std::string, std::string>& out);

// Calls f(key, value) for every field of an object; null is an empty object.
template <typename F>
void ForEachField(dom::element v, const Path& path, F&& f) {
  if (IsNull(v)) return;
  if (v.type() != dom::element_type::OBJECT) Fail(path, "expected an object");
  for (dom::key_value_pair field : dom::object(v)) f(field.key, field.value);
}

// Calls f(index, value) for every element of an array; null is an empty array.
template <typename F>
void ForEachElement(dom::element v, const Path& path, F&& f) {
  if (IsNull(v)) return;
  if (v.type() != dom::element_type::ARRAY) Fail(path, "expected an array");
  int i = 0;
  for (dom::element e : dom::array(v)) f(i++, e);
}

// Parses `padded` with `parser`; a simdjson error becomes a DecodeError saying "invalid JSON".
dom::element Parse(dom::parser& parser, const simdjson::padded_string& padded);

}  // namespace topofit::k8s::json
