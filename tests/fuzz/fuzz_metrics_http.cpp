// Fuzz target: bytes a client sends to the /metrics server, as one connection. They are read
// by a server configured exactly as hlm's (configure_metrics_server), from memory instead of a
// socket, one request after another until the input is used up or the server closes the
// connection. The request parser is Debian's libcpp-httplib: not instrumented, so libFuzzer's
// coverage comes from hlm's handlers and the mutations of the seed requests; a crash or a
// sanitizer report anywhere in the process is still a finding.
#include <httplib.h>

#include <algorithm>
#include <cstring>

#include "metrics/http_routes.h"

namespace {

// A connection whose client sent `data`, and whose answers are discarded.
class RequestBytes : public httplib::Stream {
 public:
  RequestBytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, size_ - read_);
    std::memcpy(ptr, data_ + read_, n);
    read_ += n;
    return ssize_t(n);
  }
  ssize_t write(const char*, size_t size) override { return ssize_t(size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 9464;
  }
  socket_t socket() const override { return -1; }
  bool used_up() const { return read_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t read_ = 0;
};

// process_request is protected: the server's own per-connection step, with no socket.
class MetricsServer : public httplib::Server {
 public:
  MetricsServer() {
    hlm::configure_metrics_server(*this, [] {
      return std::string(
          "# HELP hlm_train_steps_total Optimizer steps taken.\n"
          "# TYPE hlm_train_steps_total counter\n"
          "hlm_train_steps_total{run=\"r\",rank=\"0\",stage=\"pretrain\"} 42\n");
    });
  }
  bool serve(RequestBytes& connection) {
    bool closed = false;
    return process_request(connection, false, closed, nullptr) && !closed;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static MetricsServer server;
  RequestBytes connection(data, size);
  // Kept-alive requests one after another, as a scraper sends them; bounded, as the server's
  // keep_alive_max_count bounds a real connection.
  for (int request = 0; request < 16 && !connection.used_up(); ++request)
    if (!server.serve(connection)) break;
  return 0;
}
