#include "extender/k8s/yaml_to_json.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <istream>
#include <streambuf>
#include <vector>

#include "base/json_writer.h"
#include "base/work_deadline.h"
#include "extender/k8s/yaml_scalar.h"

namespace topofit::k8s {
namespace {

// The text as an istream without a copy.
struct ViewBuf : std::streambuf {
  explicit ViewBuf(std::string_view s) {
    char* p = const_cast<char*>(s.data());
    setg(p, p, p + s.size());
  }
};

// Builds the JSON from the parser's events: one frame per open sequence or mapping, one record per
// anchor (a scalar's text, or where a collection's JSON lies in `out`), and the alias budget.
class JsonBuilder final : public YAML::EventHandler {
 public:
  JsonBuilder(const YamlLimits& limits, std::string& out) : limits_(limits), out_(out) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (Place(mark)) throw YAML::ParserException(mark, "mapping keys must be scalars");
    out_ += "null";
    ++nodes_;
    if (anchor) Define(anchor).kind = Anchor::kNull;
    Placed();
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
    if (Place(mark)) {
      AppendJsonString(out_, value);
      out_ += ':';
    } else {
      AppendYamlScalar(out_, tag, value);
    }
    ++nodes_;
    if (anchor) {
      Anchor& a = Define(anchor);
      a.kind = Anchor::kScalar;
      a.tag = tag;
      a.raw = value;
    }
    Placed();
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override;
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    Open(mark, anchor, false);
  }
  void OnSequenceEnd() override { Close(']'); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    Open(mark, anchor, true);
  }
  void OnMapEnd() override { Close('}'); }

 private:
  struct Frame {
    bool map;
    bool first = true;
    bool at_key = true;  // In a mapping: the next node is a key.
    YAML::anchor_t anchor;
    size_t start;        // Where its JSON begins in out_.
    size_t nodes_before;
  };
  struct Anchor {
    enum Kind { kOpen, kNull, kScalar, kCollection } kind = kOpen;
    std::string tag, raw;                // kScalar.
    size_t offset = 0, length = 0, nodes = 0;  // kCollection: its JSON in out_.
  };

  Anchor& Define(YAML::anchor_t id) {
    if (id >= anchors_.size()) anchors_.resize(id + 1);
    anchors_[id] = Anchor{};
    return anchors_[id];
  }

  // Writes what comes before a node (a comma, nothing for a key's value) and checks the depth and,
  // now and then, the deadline. True when the node is a mapping key.
  bool Place(const YAML::Mark& mark) {
    if (++events_ % 4096 == 0) {
      if (std::string_view why = WorkDeadline::Expired(); !why.empty()) throw yaml_internal::WorkStopped{why};
    }
    if (stack_.empty()) return false;
    if (stack_.size() > static_cast<size_t>(limits_.max_depth)) throw YAML::ParserException(mark, "nesting too deep");
    Frame& f = stack_.back();
    if (f.map && !f.at_key) return false;
    if (!f.first) out_ += ',';
    f.first = false;
    return f.map;
  }
  // A key or a value is complete: in a mapping the other comes next.
  void Placed() {
    if (!stack_.empty() && stack_.back().map) stack_.back().at_key = !stack_.back().at_key;
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    if (Place(mark)) throw YAML::ParserException(mark, "mapping keys must be scalars");
    if (anchor) Define(anchor);  // Open: an alias to it inside it is refused.
    stack_.push_back(Frame{map, true, true, anchor, out_.size(), nodes_});
    out_ += map ? '{' : '[';
    ++nodes_;
  }
  void Close(char bracket) {
    Frame f = stack_.back();
    stack_.pop_back();
    out_ += bracket;
    if (f.anchor) {
      Anchor& a = anchors_[f.anchor];
      a.kind = Anchor::kCollection;
      a.offset = f.start;
      a.length = out_.size() - f.start;
      a.nodes = nodes_ - f.nodes_before;
    }
    Placed();
  }

  void Spend(const YAML::Mark& mark, size_t nodes, size_t bytes);

  const YamlLimits& limits_;
  std::string& out_;
  std::vector<Frame> stack_;
  std::vector<Anchor> anchors_;  // By yaml-cpp's anchor number.
  size_t nodes_ = 0;
  size_t events_ = 0;
  size_t alias_nodes_ = 0;
  size_t alias_bytes_ = 0;
};

void JsonBuilder::Spend(const YAML::Mark& mark, size_t nodes, size_t bytes) {
  alias_nodes_ += nodes;
  alias_bytes_ += bytes;
  if (alias_nodes_ > limits_.max_alias_nodes)
    throw YAML::ParserException(mark, fmt::format("aliases expand the document by more than {} nodes (the limit "
                                                  "that stops alias bombs)", limits_.max_alias_nodes));
  if (alias_bytes_ > limits_.max_alias_bytes)
    throw YAML::ParserException(mark, fmt::format("aliases expand the document by more than {} bytes (the limit "
                                                  "that stops alias bombs)", limits_.max_alias_bytes));
}

void JsonBuilder::OnAlias(const YAML::Mark& mark, YAML::anchor_t id) {
  const bool key = Place(mark);
  if (id >= anchors_.size() || anchors_[id].kind == Anchor::kOpen)
    throw YAML::ParserException(mark, "an alias inside the node it names");
  const Anchor& a = anchors_[id];
  if (!key && a.kind == Anchor::kCollection) {
    Spend(mark, a.nodes, a.length);  // Checked before the copy: never past the limit.
    out_.append(out_, a.offset, a.length);
    nodes_ += a.nodes;
  } else {
    const size_t before = out_.size();
    if (key) {
      if (a.kind != Anchor::kScalar) throw YAML::ParserException(mark, "mapping keys must be scalars");
      AppendJsonString(out_, a.raw);
      out_ += ':';
    } else if (a.kind == Anchor::kNull) {
      out_ += "null";
    } else {
      AppendYamlScalar(out_, a.tag, a.raw);
    }
    Spend(mark, 1, out_.size() - before);  // At most one scalar past the limit.
    ++nodes_;
  }
  Placed();
}

}  // namespace

namespace yaml_internal {

void Convert(std::string_view yaml, const YamlLimits& limits, std::string& out) {
  ViewBuf buf(yaml);
  std::istream in(&buf);
  YAML::Parser parser(in);
  JsonBuilder builder(limits, out);
  parser.HandleNextDocument(builder);  // Only the first document.
}

}  // namespace yaml_internal

Result<std::string> YamlToJson(std::string_view yaml, const YamlLimits& limits) {
  try {
    std::string out;
    out.reserve(yaml.size());
    yaml_internal::Convert(yaml, limits, out);
    if (out.empty()) out = "null";  // No document, or one of comments only.
    return out;
  } catch (const yaml_internal::WorkStopped& stopped) {
    return Error{std::string(stopped.reason)};
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Error{fmt::format("invalid YAML: {}", e.msg)};
    return Error{fmt::format("invalid YAML: line {}, column {}: {}", e.mark.line + 1,
                             e.mark.column + 1, e.msg)};
  } catch (const std::exception& e) {
    return Error{fmt::format("invalid YAML: {}", e.what())};
  }
}

bool LooksLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

}  // namespace topofit::k8s
