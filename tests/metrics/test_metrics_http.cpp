// The metrics HTTP server (core/src/metrics/http_exposer.*) at the protocol level: headers,
// paths and methods, and that slow or silent clients neither hang it nor delay shutdown.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "metrics/metrics.h"
#include "support/http_get.h"

using hlm::test::http_exchange;

namespace {

std::string status_line(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

// A connected client that sends nothing until destroyed.
struct SilentClient {
  explicit SilentClient(int port) : fd(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~SilentClient() { ::close(fd); }
  int fd;
  bool connected = false;
};

}  // namespace

TEST(MetricsHttp, MetricsHasPrometheusTextHeadersAndExactLength) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  const std::string r =
      http_exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(status_line(r), "HTTP/1.1 200 OK") << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos)
      << r;
  EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos) << r;
  const size_t at = r.find("Content-Length: ");
  ASSERT_NE(at, std::string::npos) << r;
  const size_t length = std::stoul(r.substr(at + 16));
  EXPECT_EQ(r.size() - (r.find("\r\n\r\n") + 4), length);
  EXPECT_NE(r.find("# TYPE hlm_build_info gauge"), std::string::npos) << r;
}

TEST(MetricsHttp, RootLinksMetricsOtherPathsAre404AndPostIs405) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  const std::string root = http_exchange(port, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(status_line(root), "HTTP/1.1 200 OK");
  EXPECT_NE(root.find("href=\"/metrics\""), std::string::npos) << root;
  EXPECT_EQ(status_line(http_exchange(port, "GET /nope HTTP/1.0\r\n\r\n")),
            "HTTP/1.1 404 Not Found");
  EXPECT_EQ(status_line(http_exchange(port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n")),
            "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(status_line(http_exchange(port, "garbage\r\n\r\n")), "HTTP/1.1 400 Bad Request");
  // A query string is ignored; HEAD gets the headers only.
  EXPECT_NE(hlm::test::http_get(port, "/metrics?x=1").find("hlm_build_info"), std::string::npos);
  const std::string head = http_exchange(port, "HEAD /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(status_line(head), "HTTP/1.1 200 OK");
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "");
}

TEST(MetricsHttp, ShutdownIsImmediateEvenWithASilentClientConnected) {
  auto m = std::make_unique<hlm::Metrics>();
  const int port = m->start_exposer(0);
  SilentClient silent(port);
  ASSERT_TRUE(silent.connected);
  const auto start = std::chrono::steady_clock::now();
  m.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

TEST(MetricsHttp, ASilentClientIsDroppedAndLaterScrapesAreServed) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  SilentClient silent(port);
  ASSERT_TRUE(silent.connected);
  // Served once the silent client's request times out (2 s), not never.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(hlm::test::http_get(port, "/metrics").find("hlm_build_info"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4500));
}
