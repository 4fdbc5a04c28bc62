#include "extender/k8s/json_read.h"

#include <fmt/format.h>

#include <vector>

namespace topofit::k8s::json {

std::string Path::str() const {
  std::vector<const Path*> chain;
  for (const Path* p = this; p; p = p->parent) chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Path* p = *it;
    if (p->index >= 0) {
      out += fmt::format("[{}]", p->index);
    } else if (!p->name.empty()) {
      // Resource and label keys contain dots and slashes; bracket them so the path stays readable.
      if (p->name.find_first_of("./") != std::string_view::npos) {
        out += fmt::format("[{}]", p->name);
      } else {
        if (!out.empty()) out += '.';
        out += p->name;
      }
    }
  }
  return out;
}

void Fail(const Path& path, std::string_view what) {
  std::string where = path.str();
  throw DecodeError{where.empty() ? std::string(what) : fmt::format("{}: {}", where, what)};
}

namespace {
std::string NumberText(dom::element v) {
  switch (v.type()) {
    case dom::element_type::INT64: return std::to_string(int64_t(v));
    case dom::element_type::UINT64: return std::to_string(uint64_t(v));
    case dom::element_type::DOUBLE: return fmt::format("{}", double(v));
    case dom::element_type::BOOL: return bool(v) ? "true" : "false";
    default: return {};
  }
}
}  // namespace

std::string_view StrictString(dom::element v, const Path& path) {
  if (v.type() == dom::element_type::STRING) return std::string_view(v);
  if (IsNull(v)) return {};
  Fail(path, "expected a string");
}

std::string String(dom::element v, const Path& path) {
  switch (v.type()) {
    case dom::element_type::STRING: return std::string(std::string_view(v));
    case dom::element_type::NULL_VALUE: return {};
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
    case dom::element_type::BOOL: return NumberText(v);
    default: Fail(path, "expected a string");
  }
}

std::string ScalarText(dom::element v, const Path& path) {
  if (IsNull(v)) Fail(path, "expected a string or a number, got null");
  return String(v, path);
}

int64_t Int(dom::element v, const Path& path) {
  switch (v.type()) {
    case dom::element_type::INT64: return int64_t(v);
    case dom::element_type::UINT64: Fail(path, "integer out of range");
    case dom::element_type::NULL_VALUE: return 0;
    default: Fail(path, "expected an integer");
  }
}

bool Bool(dom::element v, const Path& path) {
  if (v.type() == dom::element_type::BOOL) return bool(v);
  if (IsNull(v)) return false;
  Fail(path, "expected true or false");
}

void StringMap(dom::element v, const Path& path, std::map<std::string, std::string>& out) {
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    // Keys are data: kept as written. Values are strings in the API; a hand-written YAML may say
    // `count: 8`, so scalars are taken as their text.
    out[std::string(key)] = String(value, path.Field(key));
  });
}

dom::element Parse(dom::parser& parser, const simdjson::padded_string& padded) {
  dom::element root;
  auto error = parser.parse(padded).get(root);
  if (error) throw DecodeError{std::string("invalid JSON: ") + simdjson::error_message(error)};
  return root;
}

}  // namespace topofit::k8s::json
