// The metrics HTTP server (core/src/metrics/http_exposer.*) at the protocol level: headers,
// paths and methods, and that slow, silent, oversized or many clients neither hang it nor
// delay a scrape or shutdown.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
  const std::string r = http_exchange(
      port, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\nConnection: close\r\n\r\n");
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

// Shutdown does not wait on a silent client. It may wait for the worker holding it to reach
// its idle limit (MetricsHttpServer::kIdleSeconds, 1 s): on a loaded machine it once took
// 1.008 s, over this test's earlier 0.5 s bound. The bound sits below the 2 s read timeout, so
// a shutdown that waited for the client or a read still fails.
TEST(MetricsHttp, ShutdownIsImmediateEvenWithASilentClientConnected) {
  auto m = std::make_unique<hlm::Metrics>();
  const int port = m->start_exposer(0);
  SilentClient silent(port);
  ASSERT_TRUE(silent.connected);
  const auto start = std::chrono::steady_clock::now();
  m.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1800));
}

// A scrape is answered at once beside clients that hold connections without finishing a
// request: silent ones (Prometheus's scrape timeout is 10 s, and a server that took one
// connection at a time answered in 10 s behind 5 of them) and one that sent half a request.
TEST(MetricsHttp, ScrapesAreServedBesideSilentAndHalfSentClients) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  std::vector<std::unique_ptr<SilentClient>> silent;
  for (int i = 0; i < 5; ++i) {
    silent.push_back(std::make_unique<SilentClient>(port));
    ASSERT_TRUE(silent.back()->connected);
  }
  const std::string half = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAcc";
  ASSERT_EQ(::send(silent.back()->fd, half.data(), half.size(), 0), ssize_t(half.size()));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(hlm::test::http_get(port, "/metrics").find("hlm_build_info"), std::string::npos);
  EXPECT_EQ(hlm::test::http_get(port, "/healthz"), "ok\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

// Slow-header clients (each sends a byte of its request every half second, never finishing
// it, and so never hits the per-read timeout) hold a connection each, not the scrapes: with
// more of them than the old fixed pool of 8 workers, a scrape is still answered at once.
TEST(MetricsHttp, ScrapesAreServedWhileSlowHeaderClientsHoldConnections) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  std::vector<std::unique_ptr<SilentClient>> slow;
  for (int i = 0; i < 12; ++i) {
    slow.push_back(std::make_unique<SilentClient>(port));
    ASSERT_TRUE(slow.back()->connected);
  }
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    for (size_t at = 0; !done; at = (at + 1) % request.size()) {
      for (auto& client : slow) (void)!::send(client->fd, &request[at], 1, MSG_NOSIGNAL);
      for (int t = 0; t < 5 && !done; ++t)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // every slow client is held
  const auto start = std::chrono::steady_clock::now();
  const std::string body = hlm::test::http_get(port, "/metrics");
  const auto waited = std::chrono::steady_clock::now() - start;
  done = true;
  trickle.join();
  EXPECT_NE(body.find("hlm_build_info"), std::string::npos);
  EXPECT_LT(waited, std::chrono::milliseconds(1000));
}

// A request with 1 MB of headers, sent slowly, gets an answer, and other scrapes are served
// while it arrives.
TEST(MetricsHttp, AMegabyteOfHeadersIsAnsweredWhileOthersAreServed) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  while (request.size() < (1u << 20)) request += "X-Filler: " + std::string(1000, 'x') + "\r\n";
  request += "\r\n";
  SilentClient big(port);
  ASSERT_TRUE(big.connected);
  std::thread sender([&] {
    for (size_t at = 0; at < request.size(); at += 64 * 1024) {
      ::send(big.fd, request.data() + at, std::min<size_t>(64 * 1024, request.size() - at),
             MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(hlm::test::http_get(port, "/metrics").find("hlm_build_info"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  sender.join();
  timeval timeout{5, 0};
  ::setsockopt(big.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char head[16] = {};
  ASSERT_GT(::recv(big.fd, head, sizeof(head) - 1, MSG_WAITALL), 0);
  EXPECT_EQ(std::string(head).rfind("HTTP/1.1 ", 0), 0u) << head;
}

TEST(MetricsHttp, TwoHundredConcurrentScrapesAreAllAnswered) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  constexpr int kClients = 200;
  std::vector<int> answered(kClients, 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      answered[size_t(i)] =
          hlm::test::http_get(port, "/metrics").find("hlm_build_info") != std::string::npos;
    });
  for (auto& c : clients) c.join();
  EXPECT_EQ(std::count(answered.begin(), answered.end(), 1), kClients);
}

// Prometheus keeps its connection to a target open between scrapes: the server answers many
// requests, one after another, on one connection (cpp-httplib's default closes it after 5).
TEST(MetricsHttp, OneConnectionServesManyScrapes) {
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  SilentClient client(port);
  ASSERT_TRUE(client.connected);
  timeval timeout{5, 0};
  ::setsockopt(client.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  int answered = 0;
  for (int i = 0; i < 20; ++i) {
    if (::send(client.fd, request.data(), request.size(), MSG_NOSIGNAL) != ssize_t(request.size()))
      break;
    // One whole response: headers, then Content-Length bytes of body.
    std::string response;
    char buffer[4096];
    size_t header_end = std::string::npos, length = 0;
    while (header_end == std::string::npos || response.size() < header_end + 4 + length) {
      const ssize_t n = ::recv(client.fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      response.append(buffer, size_t(n));
      if (header_end == std::string::npos &&
          (header_end = response.find("\r\n\r\n")) != std::string::npos) {
        const size_t at = response.find("Content-Length: ");
        length = at < header_end ? std::stoul(response.substr(at + 16)) : 0;
      }
    }
    if (status_line(response) != "HTTP/1.1 200 OK" || response.size() != header_end + 4 + length)
      break;
    ++answered;
  }
  EXPECT_EQ(answered, 20);
}
