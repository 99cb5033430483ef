// A minimal HTTP server for Prometheus scrapes of /metrics. It replaces prometheus-cpp's
// civetweb Exposer, which fails ("null context when constructing CivetServer") in any process
// that links LibTorch 1.13 — and the hlm binary does.
#pragma once
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace prometheus {
class Collectable;
}

namespace hlm {

// Serves GET /metrics (text format 0.0.4) from the given collectables, GET / (a link to
// /metrics) and 404 for anything else, on one background thread, one connection at a time.
// Each connection gets a few seconds at most, so a slow or silent client cannot stall it.
class MetricsHttpServer {
 public:
  // Binds and listens on bind_address:port (port 0 = any free port) and starts serving.
  // Throws ConfigError when that address and port cannot be served (port out of range, an
  // address that does not resolve, a port that is taken), and Error when the process is out
  // of resources; each message names bind_address:port, the failed call and its reason.
  MetricsHttpServer(const std::string& bind_address, int port,
                    std::vector<std::shared_ptr<prometheus::Collectable>> collectables);
  // Stops at once, even mid-request: the thread also waits on a stop eventfd.
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  int port() const { return port_; }

 private:
  void serve();
  void handle(int client);
  std::string render_metrics() const;

  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace hlm
