#pragma once
// The web view's files (extender/server/ui/: index.html, app.js, overview.js, style.css), compiled into the
// binary by extender/server/CMakeLists.txt so `topofit serve` needs nothing on disk to serve /ui.
// UiAsset maps a request path under /ui to the file's bytes and Content-Type; nullptr otherwise.

#include <string_view>

namespace topofit::server {

struct UiAssetFile {
  std::string_view body;
  std::string_view content_type;
};

// "/ui", "/ui/" and "/ui/index.html" -> the page; "/ui/app.js", "/ui/overview.js", "/ui/style.css" ->
// those files.
const UiAssetFile* UiAsset(std::string_view path);

}  // namespace topofit::server
