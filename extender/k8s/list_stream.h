#pragma once
// ListStream: the items of a Kubernetes List (JSON) one at a time while its text arrives in pieces,
// so that a list of any size is decoded in the memory of one item instead of the whole document.
// The snapshot loader reads files through it; the live client its list responses.
//
// Feed() the text in pieces of any size, then Finish(). For each element of the root object's
// "items" array, on_item(index, text) gets the element's bytes as soon as all of them have arrived,
// in order; an Error it returns stops the stream and is returned by that Feed/Finish. Every other
// root field (kind, apiVersion, metadata; or each field of a root that is one object, not a List) is
// kept as raw text in fields(), in order; a root "items" that is not an array (null, say) is such a
// field too. The key "items" is matched exactly (escapes decoded), as simdjson's object["items"]
// does; a second "items" is an ordinary field.
//
// Checked here: the structure between values (the root is one object; keys are strings; ':', ','
// and the brackets in place; nothing after the root but whitespace). Not checked here: the text of
// each item and field, which is the consumer's to parse (and so to check). Errors give the byte
// offset: "invalid JSON at byte 1234: expected ',' or ']' after items[41]".
// Memory: the largest item plus the piece being fed, and the raw root fields.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace topofit::k8s {

class ListStream {
 public:
  using ItemFn = std::function<Status(int index, std::string_view json)>;
  struct Field {
    std::string key;   // As decoded (escapes resolved).
    std::string json;  // The value's text as written.
  };

  explicit ListStream(ItemFn on_item) : on_item_(std::move(on_item)) {}

  Status Feed(std::string_view piece);
  Status Finish();  // The text is complete: an Error if the root object is not.

  const std::vector<Field>& fields() const { return fields_; }
  bool has_items() const { return items_seen_; }  // The root's "items" was an array.
  int items() const { return index_; }            // Items delivered so far.

 private:
  enum class State { kRoot, kKeyOrClose, kKey, kColon, kValue, kAfterValue, kItemsOpen, kItemOrClose, kItem, kAfterItem, kEnd };
  Status Scan(bool at_end);
  size_t ValueEnd(bool at_end) const;  // std::string_view::npos: not all here yet.
  Status Fail(std::string_view what) const;

  ItemFn on_item_;
  std::string buf_;
  size_t pos_ = 0;        // Next byte of buf_ to read.
  size_t dropped_ = 0;    // Bytes of the text already dropped from buf_ (for error offsets).
  size_t wait_for_ = 0;   // An incomplete value is scanned again once buf_ holds this many bytes.
  State state_ = State::kRoot;
  std::string key_;
  bool items_seen_ = false;
  int index_ = 0;
  bool failed_ = false;
  Status error_;
  std::vector<Field> fields_;
};

}  // namespace topofit::k8s
