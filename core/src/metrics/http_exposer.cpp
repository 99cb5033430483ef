// MetricsHttpServer on cpp-httplib (see http_exposer.h).
#include "metrics/http_exposer.h"

#include <fcntl.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <prometheus/collectable.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "hlm/errors.h"
#include "metrics/connection_threads.h"
#include "metrics/http_routes.h"

namespace hlm {
namespace {

// Why bind_address:port cannot be listened on, found by trying as the server does (cpp-httplib
// reports only that it failed): "bind: Address already in use" and the like.
std::string listen_failure(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc =
          ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found))
    return std::string("getaddrinfo: ") + ::gai_strerror(rc) +
           "; give a bind address this host resolves, such as 127.0.0.1 or ::1";
  std::string failure = "no address to listen on";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    const char* call = fd < 0                                       ? "socket"
                       : ::bind(fd, a->ai_addr, a->ai_addrlen) != 0 ? "bind"
                       : ::listen(fd, 16) != 0                      ? "listen"
                                                                    : nullptr;
    const int error = errno;
    if (fd >= 0) ::close(fd);
    if (call == nullptr) {
      failure = "it could be bound a moment later (a port freed or taken meanwhile)";
      break;
    }
    failure = std::string(call) + ": " + std::strerror(error);
  }
  ::freeaddrinfo(found);
  return failure + "; set another metrics port, or 0 for any free port";
}

void text(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "text/plain; charset=utf-8");
}

}  // namespace

void configure_metrics_server(httplib::Server& s, std::function<std::string()> render_metrics) {
  s.new_task_queue = [] { return new ConnectionThreads(MetricsHttpServer::kMaxConnections); };
  // A client that connects and sends nothing is dropped after kIdleSeconds; one that trickles
  // a request gets a few seconds per read. Prometheus sends its request at once (scrape
  // timeout 10 s).
  s.set_keep_alive_timeout(MetricsHttpServer::kIdleSeconds);
  s.set_read_timeout(2, 0);
  s.set_write_timeout(5, 0);
  s.set_payload_max_length(64 * 1024);  // scrapes carry no body
  // A kept-alive connection must not wait 40 ms per answer (Nagle against the client's delayed
  // ACK, headers and body being two writes), nor be closed every 5 requests (the default).
  s.set_tcp_nodelay(true);
  s.set_keep_alive_max_count(1000);
  s.Get("/metrics", [render_metrics](const httplib::Request&, httplib::Response& res) {
    try {
      res.set_content(render_metrics(), "text/plain; version=0.0.4; charset=utf-8");
    } catch (const std::exception& e) {
      text(res, 500, std::string(e.what()) + "\n");
    }
  });
  s.Get("/healthz",
        [](const httplib::Request&, httplib::Response& res) { text(res, 200, "ok\n"); });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html><body><a href=\"/metrics\">/metrics</a></body></html>\n",
                    "text/html; charset=utf-8");
  });
  const auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
    text(res, 405, "method not allowed\n");
    res.set_header("Allow", "GET, HEAD");
  };
  s.Post(".*", not_allowed);
  s.Put(".*", not_allowed);
  s.Patch(".*", not_allowed);
  s.Delete(".*", not_allowed);
  s.Options(".*", not_allowed);
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty())
      text(res, res.status, res.status == 404 ? "not found\n" : "bad request\n");
  });
}

MetricsHttpServer::MetricsHttpServer(
    const std::string& bind_address, int port,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables)
    : collectables_(std::move(collectables)), server_(std::make_unique<httplib::Server>()) {
  if (port < 0 || port > 65535)
    throw ConfigError(
        "cannot serve metrics on {}:{}: the port must be 0 to 65535; set another metrics port, "
        "or 0 for any free port",
        bind_address, port);
  std::string host = bind_address;  // accept "[::1]" as well as "::1"
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);

  httplib::Server& s = *server_;
  configure_metrics_server(s, [this] { return render_metrics(); });
  // The listening socket is not inherited by rank processes or plugins' children (which
  // would keep the port open after hlm exits).
  int listen_fd = -1;
  s.set_socket_options([&listen_fd](socket_t fd) {
    listen_fd = fd;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));  // accepted sockets inherit it
    ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
  });

  const bool bound =
      port == 0 ? (port_ = s.bind_to_any_port(host)) > 0 : s.bind_to_port(host, port);
  if (!bound)
    throw ConfigError("cannot serve metrics on {}:{}: {}", bind_address, port,
                      listen_failure(host, port));
  if (port != 0) port_ = port;
  // cpp-httplib listens with a backlog of 5: a burst of connections (many scrapers, a
  // browser) beyond it would wait for SYN retries, seconds each. Listening again sets the
  // queue to the system's limit.
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() acts only on a running server: a server destroyed right after it was made would
  // otherwise be stopped before its thread started listening, and never return.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MetricsHttpServer::~MetricsHttpServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string MetricsHttpServer::render_metrics() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& c : collectables_) {
    std::vector<prometheus::MetricFamily> more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace hlm
