// The HTTP server for Prometheus scrapes of /metrics and for health checks, on cpp-httplib
// (Debian's libcpp-httplib-dev): each connection on a thread of its own (up to
// kMaxConnections), so slow, silent or malformed clients do not hold up a scrape. prometheus-cpp's
// own civetweb Exposer fails ("null context when constructing CivetServer") in any process that
// links LibTorch 1.13, and the hlm binary does.
#pragma once
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace prometheus {
class Collectable;
}
namespace httplib {
class Server;
}

namespace hlm {

// Serves GET (and HEAD) /metrics (text format 0.0.4) from the given collectables, /healthz
// ("ok": answered by the server's own threads, never waiting on training), / (a link to
// /metrics), 404 for other paths and 405 for other methods.
class MetricsHttpServer {
 public:
  // Connections served at once (more wait for one to end); a connection that sends nothing
  // holds one for at most kIdleSeconds, one that trickles its request 2 s per read.
  static constexpr int kMaxConnections = 64;
  static constexpr int kIdleSeconds = 1;

  // Binds and listens on bind_address:port (port 0 = any free port) and starts serving.
  // Throws ConfigError when that address and port cannot be served (port out of range, an
  // address that does not resolve, a port that is taken); the message names
  // bind_address:port, the failed call and its reason.
  MetricsHttpServer(const std::string& bind_address, int port,
                    std::vector<std::shared_ptr<prometheus::Collectable>> collectables);
  // Stops accepting at once; returns when the workers finished (a silent client's connection
  // is dropped within kIdleSeconds).
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  int port() const { return port_; }

 private:
  std::string render_metrics() const;

  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace hlm
