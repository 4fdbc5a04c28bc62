#include "extender/cluster/device_selector.h"

#include <cctype>
#include <optional>

#include <fmt/format.h>

namespace topofit::cluster {
namespace {

// A tiny cursor over one CEL expression.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {}
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Eat(std::string_view token) {
    Skip();
    if (s_.substr(i_, token.size()) != token) return false;
    i_ += token.size();
    return true;
  }
  bool AtEnd() {
    Skip();
    return i_ == s_.size();
  }
  std::optional<std::string> Quoted() {
    Skip();
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) return std::nullopt;
    const char quote = s_[i_];
    size_t end = s_.find(quote, i_ + 1);
    if (end == std::string_view::npos || s_.substr(i_ + 1, end - i_ - 1).find('\\') != std::string_view::npos)
      return std::nullopt;
    std::string out(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return out;
  }
  std::string Word() {
    Skip();
    size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '-')) ++i_;
    return std::string(s_.substr(start, i_ - start));
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

// device.driver | device.attributes["D"].N | device.attributes["D"]["N"]: the qualified attribute
// name ("" for the driver), or nullopt.
std::optional<std::string> Subject(Scanner& sc) {
  if (!sc.Eat("device.")) return std::nullopt;
  if (sc.Eat("driver")) return std::string();
  if (!sc.Eat("attributes[")) return std::nullopt;
  auto domain = sc.Quoted();
  if (!domain || !sc.Eat("]")) return std::nullopt;
  std::string name;
  if (sc.Eat(".")) {
    name = sc.Word();
  } else if (sc.Eat("[")) {
    auto quoted = sc.Quoted();
    if (!quoted || !sc.Eat("]")) return std::nullopt;
    name = *quoted;
  }
  if (name.empty()) return std::nullopt;
  return *domain + "/" + name;
}

std::optional<std::string> Literal(Scanner& sc) {
  if (auto q = sc.Quoted()) return q;
  std::string w = sc.Word();
  if (w == "true" || w == "false") return w;
  if (w.empty()) return std::nullopt;
  for (size_t i = 0; i < w.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(w[i])) && !(i == 0 && w[i] == '-')) return std::nullopt;
  return w;
}

}  // namespace

Result<DeviceSelector> DeviceSelector::Parse(const std::vector<std::string>& cel_selectors) {
  DeviceSelector out;
  for (const std::string& expr : cel_selectors) {
    Scanner sc(expr);
    do {
      Term t;
      if (auto subject = Subject(sc)) {
        auto value = sc.Eat("==") ? Literal(sc) : std::nullopt;
        if (!value) return Error{fmt::format("CEL selector '{}': only `==` on the driver or an attribute is read", expr)};
        t = Term{*subject, *value};
      } else if (auto value = Literal(sc); value && sc.Eat("==")) {
        auto subject2 = Subject(sc);
        if (!subject2) return Error{fmt::format("CEL selector '{}': only `==` on the driver or an attribute is read", expr)};
        t = Term{*subject2, *value};
      } else {
        return Error{fmt::format("CEL selector '{}': only `==` on the driver or an attribute is read", expr)};
      }
      out.terms_.push_back(std::move(t));
    } while (sc.Eat("&&"));
    if (!sc.AtEnd()) return Error{fmt::format("CEL selector '{}': only terms joined by && are read", expr)};
  }
  return out;
}

bool DeviceSelector::Matches(std::string_view driver, const std::map<std::string, std::string>& attributes) const {
  for (const Term& t : terms_) {
    if (t.attribute.empty()) {
      if (driver != t.value) return false;
      continue;
    }
    auto it = attributes.find(t.attribute);
    if (it == attributes.end() || it->second != t.value) return false;
  }
  return true;
}

}  // namespace topofit::cluster
