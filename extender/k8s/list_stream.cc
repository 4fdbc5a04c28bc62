#include "extender/k8s/list_stream.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "extender/k8s/raw_json.h"

namespace topofit::k8s {
namespace {

constexpr size_t kNpos = std::string_view::npos;

using json::SkipSpace;
using json::StringEnd;  // npos: the closing quote has not arrived.

// A key as written (quotes included) decoded into *out; false when it is not a valid JSON string.
// Plain ASCII is taken as written; escapes, control bytes and UTF-8 go through simdjson, which checks them.
bool DecodeKey(std::string_view quoted, std::string* out) {
  bool plain = true;
  for (char c : quoted.substr(1, quoted.size() - 2)) plain &= c != '\\' && c >= 0x20 && c < 0x7f;
  if (plain) {
    out->assign(quoted.substr(1, quoted.size() - 2));
    return true;
  }
  simdjson::dom::parser parser;
  simdjson::padded_string padded(quoted);
  std::string_view s;
  if (parser.parse(padded).get_string().get(s) != simdjson::SUCCESS) return false;
  out->assign(s);
  return true;
}

}  // namespace

Status ListStream::Fail(std::string_view what) const {
  return Error{fmt::format("invalid JSON at byte {}: {}", dropped_ + pos_, what)};
}

size_t ListStream::ValueEnd(bool at_end) const {
  size_t end = json::SkipValue(buf_, pos_);
  // A value ending exactly at the end of what arrived may continue in the next piece (a number, or a
  // container whose close has not come): values are always followed by ',' ']' or '}' in a List.
  if (end >= buf_.size() && !at_end) return kNpos;
  return end;
}

Status ListStream::Feed(std::string_view piece) {
  if (failed_) return error_;
  buf_.append(piece);
  if (buf_.size() < wait_for_) return Status::Ok();
  Status s = Scan(false);
  // Drop what was read; what stays is at most one incomplete value.
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    dropped_ += pos_;
    wait_for_ = wait_for_ > pos_ ? wait_for_ - pos_ : 0;
    pos_ = 0;
  }
  return s;
}

Status ListStream::Finish() {
  if (failed_) return error_;
  Status s = Scan(true);
  if (!s.ok()) return s;
  if (state_ != State::kEnd) {
    pos_ = buf_.size();
    return Fail(state_ == State::kRoot ? "expected a JSON object" : "the text ends inside the root object");
  }
  return Status::Ok();
}

Status ListStream::Scan(bool at_end) {
  auto fail = [this](std::string_view what) {
    failed_ = true;
    error_ = Fail(what);
    return error_;
  };
  for (;;) {
    pos_ = SkipSpace(buf_, pos_);
    if (pos_ >= buf_.size()) return Status::Ok();
    const char c = buf_[pos_];
    switch (state_) {
      case State::kRoot:
        if (c != '{') return fail("expected a JSON object");
        ++pos_;
        state_ = State::kKeyOrClose;
        break;
      case State::kKeyOrClose:
        if (c == '}') {
          ++pos_;
          state_ = State::kEnd;
          break;
        }
        state_ = State::kKey;
        [[fallthrough]];
      case State::kKey: {
        if (c != '"') return fail("expected a field name");
        size_t end = StringEnd(buf_, pos_);
        if (end == kNpos) {
          if (at_end) return fail("the text ends inside a field name");
          wait_for_ = pos_ + 2 * (buf_.size() - pos_);
          return Status::Ok();
        }
        if (!DecodeKey(std::string_view(buf_).substr(pos_, end - pos_), &key_)) return fail("invalid field name");
        pos_ = end;
        state_ = State::kColon;
        break;
      }
      case State::kColon:
        if (c != ':') return fail("expected ':' after a field name");
        ++pos_;
        state_ = key_ == "items" && !items_seen_ ? State::kItemsOpen : State::kValue;
        break;
      case State::kItemsOpen:
        if (c == '[') {
          ++pos_;
          items_seen_ = true;
          state_ = State::kItemOrClose;
          break;
        }
        state_ = State::kValue;  // Not an array: an ordinary field, for the consumer to judge.
        [[fallthrough]];
      case State::kValue: {
        size_t end = ValueEnd(at_end);
        if (end == kNpos) {
          wait_for_ = pos_ + 2 * (buf_.size() - pos_);
          return Status::Ok();
        }
        if (end == pos_) return fail("expected a value");
        fields_.push_back({key_, buf_.substr(pos_, end - pos_)});
        pos_ = end;
        state_ = State::kAfterValue;
        break;
      }
      case State::kAfterValue:
        if (c == ',') state_ = State::kKey;
        else if (c == '}') state_ = State::kEnd;
        else return fail("expected ',' or '}' after a field");
        ++pos_;
        break;
      case State::kItemOrClose:
        if (c == ']') {
          ++pos_;
          state_ = State::kAfterValue;
          break;
        }
        state_ = State::kItem;
        [[fallthrough]];
      case State::kItem: {
        size_t end = ValueEnd(at_end);
        if (end == kNpos) {
          wait_for_ = pos_ + 2 * (buf_.size() - pos_);
          return Status::Ok();
        }
        if (end == pos_) return fail(fmt::format("expected a value for items[{}]", index_));
        Status s = on_item_(index_, std::string_view(buf_).substr(pos_, end - pos_));
        if (!s.ok()) {
          failed_ = true;
          error_ = s;
          return s;
        }
        ++index_;
        pos_ = end;
        state_ = State::kAfterItem;
        break;
      }
      case State::kAfterItem:
        if (c == ',') state_ = State::kItem;
        else if (c == ']') state_ = State::kAfterValue;
        else return fail(fmt::format("expected ',' or ']' after items[{}]", index_ - 1));
        ++pos_;
        break;
      case State::kEnd:
        return fail("text after the end of the root object");
    }
  }
}

}  // namespace topofit::k8s
