#pragma once
// Test fixture: an HttpListener on 127.0.0.1, an ephemeral port, 4 threads (the rest of the options
// as given), running on a thread of its own until the fixture goes out of scope. A failed Bind
// throws (a failed test case; the end of a perftest).
#include <stdexcept>
#include <thread>

#include "extender/server/http_listener.h"

namespace topofit::testing {

using server::HttpListener;
using server::ListenerOptions;

struct RunningListener {
  HttpListener listener;
  std::thread thread;

  RunningListener(ListenerOptions options, HttpListener::Handler handler)
      : listener(Loopback(std::move(options)), std::move(handler)) {
    if (Status bound = listener.Bind(); !bound.ok()) throw std::runtime_error("bind: " + bound.error());
    thread = std::thread([this] { listener.Run(); });
  }
  ~RunningListener() {
    listener.Stop();
    thread.join();
  }
  RunningListener(const RunningListener&) = delete;
  RunningListener& operator=(const RunningListener&) = delete;

 private:
  static ListenerOptions Loopback(ListenerOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    return o;
  }
};

}  // namespace topofit::testing
