// HttpListener over real sockets: framing (Content-Length, chunked, pipelining, 100-continue), limits,
// malformed requests, and stopping.
#include "extender/server/http_listener.h"
#include "extender/server/listener_test_util.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <iterator>
#include <random>
#include <string>
#include <thread>

namespace topofit::server {
namespace {

// Echoes method, path, the query parameter "q" and the body: "POST /a b|q=...|<body>".
Reply Echo(const HttpRequest& req) {
  Reply r;
  r.content_type = "text/plain";
  if (req.too_large) {
    r.status = 413;
    r.body = "too large: " + std::to_string(req.content_length);
    return r;
  }
  if (req.path == "/throw") throw std::runtime_error("boom");
  if (req.path == "/padding") {  // Reports whether a Content-Length body came with its zero padding.
    bool zero = req.padded;
    for (size_t i = 0; zero && i < HttpRequest::kBodyPadding; ++i) zero = req.body.data()[req.body.size() + i] == 0;
    r.body = zero ? "padded" : "not padded";
    return r;
  }
  r.body = std::string(req.method) + " " + req.path + "|q=" + req.QueryParam("q") + "|" + std::string(req.body);
  return r;
}

struct Running : testing::RunningListener {
  explicit Running(ListenerOptions o = {}) : RunningListener(std::move(o), Echo) {}
};

// testing::RawConn whose failures to connect or send fail the test case.
struct Conn : testing::RawConn {
  explicit Conn(int port) : RawConn(port) { REQUIRE(ok()); }
  void Send(std::string_view s) { REQUIRE(RawConn::Send(s)); }
  // Reads until `count` whole replies arrived, the peer closed, or 5 s passed; returns all bytes read.
  std::string Read(int count, bool* closed = nullptr) { return ReadReplies(count, std::chrono::seconds(5), closed); }
  // True when the server closes the connection within 5 s (reading and dropping anything sent).
  bool ClosedByPeer() { return ClosedWithin(std::chrono::seconds(5)); }
};

std::string Post(std::string_view path, std::string_view body, std::string_view extra = "") {
  return "POST " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n" + std::string(extra) +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

}  // namespace

TEST_CASE("http listener: keep-alive, pipelined requests, a multi-megabyte body byte for byte") {
  Running s;
  Conn c(s.listener.port());
  std::string big(5 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  // Three requests in one write: the second's bytes arrive with the first's.
  c.Send(Post("/one", "1") + Post("/two?q=a%20b+c", "22") + Post("/big", big));
  std::string in = c.Read(3);
  REQUIRE(Conn::Replies(in) == 3);
  CHECK(in.find("HTTP/1.1 200 OK\r\n") == 0);
  CHECK(in.find("POST /one|q=|1") != std::string::npos);
  CHECK(in.find("POST /two|q=a b c|22") != std::string::npos);
  CHECK(in.find("POST /big|q=|" + big) != std::string::npos);
  CHECK(in.find("Connection: close") == std::string::npos);
  // Still open for more.
  c.Send("GET /p%2Fq HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(c.Read(1).find("GET /p/q|q=|") != std::string::npos);
}

TEST_CASE("http listener: a Content-Length body is followed by zero padding, also after a larger one") {
  Running s;
  Conn c(s.listener.port());
  // One connection, one worker, one body buffer: the second body lands where x's were.
  c.Send(Post("/big", std::string(100000, 'x')));
  REQUIRE(Conn::Replies(c.Read(1)) == 1);
  c.Send(Post("/padding", std::string(1000, 'y')));
  std::string in = c.Read(1);
  CHECK(in.find("\r\n\r\npadded") != std::string::npos);
  CHECK(in.find("not padded") == std::string::npos);
}

TEST_CASE("http listener: chunked bodies and Expect: 100-continue") {
  Running s;
  Conn c(s.listener.port());
  c.Send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n");
  CHECK(c.Read(1).find("POST /c|q=|abcdefg") != std::string::npos);
  c.Send("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  std::string interim;
  for (int i = 0; i < 50 && interim.find("\r\n\r\n") == std::string::npos; ++i) {
    char buf[256];
    pollfd p{c.fd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      ssize_t n = recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) interim.append(buf, static_cast<size_t>(n));
    }
  }
  CHECK(interim == "HTTP/1.1 100 Continue\r\n\r\n");
  c.Send("hello");
  CHECK(c.Read(1).find("POST /e|q=|hello") != std::string::npos);
}

TEST_CASE("http listener: a body over the limit is not read, the handler words the refusal, the connection closes") {
  ListenerOptions o;
  o.max_body_bytes = 100;
  Running s(o);
  {
    Conn c(s.listener.port());
    c.Send(Post("/x", std::string(1000, 'y')));
    bool closed = false;
    std::string in = c.Read(1, &closed);
    CHECK(in.find("HTTP/1.1 413 Payload Too Large\r\n") == 0);
    CHECK(in.find("too large: 1000") != std::string::npos);
    CHECK(in.find("Connection: close\r\n") != std::string::npos);
    CHECK(c.ClosedByPeer());
  }
  {
    Conn c(s.listener.port());  // Chunked: counted as it arrives.
    c.Send("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n80\r\n" + std::string(128, 'z') + "\r\n0\r\n\r\n");
    CHECK(c.Read(1).find("HTTP/1.1 413") == 0);
  }
  Conn ok(s.listener.port());
  ok.Send(Post("/x", std::string(100, 'y')));
  CHECK(ok.Read(1).find("HTTP/1.1 200 OK") == 0);
}

TEST_CASE("http listener: malformed requests get a 400 or 431 JSON error and a close, a throwing handler a 500") {
  Running s;
  for (std::string bad : {std::string("BLAH\r\n\r\n"), std::string("GET / HTTP/9\r\n\r\n"),
                          std::string("POST / HTTP/1.1\r\nContent-Length: nope\r\n\r\n"),
                          std::string("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")}) {
    CAPTURE(bad);
    Conn c(s.listener.port());
    c.Send(bad);
    std::string in = c.Read(1);
    CHECK(in.find("HTTP/1.1 400 Bad Request\r\n") == 0);
    CHECK(in.find("{\"error\":\"malformed HTTP") != std::string::npos);
    CHECK(c.ClosedByPeer());
  }
  Conn big(s.listener.port());
  big.Send("GET / HTTP/1.1\r\nX: " + std::string(20000, 'h') + "\r\n\r\n");
  CHECK(big.Read(1).find("HTTP/1.1 431") == 0);
  Conn t(s.listener.port());
  t.Send("GET /throw HTTP/1.1\r\n\r\n");
  std::string in = t.Read(1);
  CHECK(in.find("HTTP/1.1 500") == 0);
  CHECK(in.find("internal error: boom") != std::string::npos);
  // A client gone mid-body leaves the server serving.
  {
    Conn gone(s.listener.port());
    gone.Send("POST /x HTTP/1.1\r\nContent-Length: 100000\r\n\r\nabc");
  }
  Conn after(s.listener.port());
  after.Send(Post("/after", "ok"));
  CHECK(after.Read(1).find("POST /after|q=|ok") != std::string::npos);
}

TEST_CASE("http listener: StopAccepting closes idle keep-alive connections at once and refuses new ones") {
  ListenerOptions o;
  o.keep_alive_seconds = 60;
  Running s(o);
  Conn idle(s.listener.port());
  idle.Send(Post("/a", "1"));
  REQUIRE(Conn::Replies(idle.Read(1)) == 1);
  auto start = std::chrono::steady_clock::now();
  s.listener.StopAccepting();
  CHECK(idle.ClosedByPeer());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));  // Not the 60 s keep-alive.
  // The listening socket closes once the accept loop sees the stop.
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(s.listener.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    refused = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0;
    close(fd);
    if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(refused);
}

TEST_CASE("http listener: mangled requests never stop it from serving the next one") {
  // Valid requests with bytes flipped, dropped, duplicated or cut short, each on its own connection;
  // the client stops sending after its bytes (a cut-short body times out on the server's read
  // deadline, kept short here, if it did not see the end of the stream first).
  ListenerOptions o;
  o.read_timeout_seconds = 1;
  o.max_body_bytes = 4096;
  Running s(o);
  const std::string valid[] = {
      Post("/a?q=1", R"({"Pod":{}})"),
      "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      "GET /p%2Fq HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n",
      Post("/one", "1") + Post("/two", "22"),
  };
  std::mt19937 rng(3);
  for (int round = 0; round < 120; ++round) {
    std::string bytes = valid[rng() % std::size(valid)];
    for (int edits = 1 + rng() % 4; edits > 0 && !bytes.empty(); --edits) {
      size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0: bytes[at] = static_cast<char>(rng() % 256); break;
        case 1: bytes.erase(at, 1 + rng() % 8); break;
        case 2: bytes.insert(at, bytes.substr(at, 1 + rng() % 16)); break;
        default: bytes.resize(at); break;
      }
    }
    CAPTURE(bytes);
    Conn c(s.listener.port());
    c.Send(bytes);
    shutdown(c.fd, SHUT_WR);
    CHECK(c.ClosedByPeer());  // Answered or not, the server ends the connection.
  }
  Conn after(s.listener.port());
  after.Send(Post("/after", "ok"));
  CHECK(after.Read(1).find("POST /after|q=|ok") != std::string::npos);
}

TEST_CASE("http listener: percent-decoding and query parameters") {
  CHECK(HttpListener::PercentDecode("a%2Fb%zz%4", false) == "a/b%zz%4");
  CHECK(HttpListener::PercentDecode("a+b", false) == "a+b");
  CHECK(HttpListener::PercentDecode("a+b%2B", true) == "a b+");
  HttpRequest r;
  r.query = "x=1&nodes=a%2Cb&flag&q=";
  CHECK(r.QueryParam("nodes") == "a,b");
  CHECK(r.QueryParam("x") == "1");
  CHECK(r.QueryParam("flag").empty());
  CHECK(r.QueryParam("missing").empty());
}

}  // namespace topofit::server
