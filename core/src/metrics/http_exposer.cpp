// MetricsHttpServer: sockets, a poll() loop with a stop eventfd, and just enough HTTP/1.x
// for Prometheus scrapes, browsers and curl. See http_exposer.h for why it exists.
#include "metrics/http_exposer.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <prometheus/collectable.h>
#include <prometheus/text_serializer.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "hlm/errors.h"

namespace hlm {
namespace {

using Clock = std::chrono::steady_clock;

// Deadlines for the whole request head and the whole response. Client sockets are non-blocking
// and every wait is a poll() against a deadline (rather than SO_RCVTIMEO per recv), so a client
// that trickles bytes cannot hold the single serving thread either, and the stop eventfd can
// interrupt any wait. Prometheus sends its request at once; its scrape timeout is 10 s.
constexpr std::chrono::seconds kRequestTimeout{2};
constexpr std::chrono::seconds kResponseTimeout{8};
constexpr size_t kMaxRequestHead = 16 * 1024;

// True when fd is ready for events; false on timeout or when stop_fd was signalled.
bool wait_ready(int fd, short events, int stop_fd, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;
    if (fds[1].revents != 0) return false;
    if (fds[0].revents != 0) return true;  // POLLERR/POLLHUP too: the next recv/send says which
  }
}

// Reads up to the blank line that ends the request head. Empty on timeout, stop or error.
std::string read_head(int fd, int stop_fd, Clock::time_point deadline) {
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.find("\n\n") == std::string::npos) {
    if (head.size() > kMaxRequestHead || !wait_ready(fd, POLLIN, stop_fd, deadline)) return "";
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) break;  // the client half-closed after its request: answer what we have
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return "";
    }
    head.append(buffer, static_cast<size_t>(n));
  }
  return head;
}

void send_all(int fd, const std::string& data, int stop_fd, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < data.size() && wait_ready(fd, POLLOUT, stop_fd, deadline)) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
    if (n > 0) sent += static_cast<size_t>(n);
  }
}

std::string response(int status, const char* reason, const std::string& content_type,
                     const std::string& body, bool head_only, const char* extra = "") {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n" +
                  "Content-Type: " + content_type + "\r\n" +
                  "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra +
                  "Connection: close\r\n\r\n";
  if (!head_only) r += body;
  return r;
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(
    const std::string& bind_address, int port,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables)
    : collectables_(std::move(collectables)) {
  if (port < 0 || port > 65535)
    throw ConfigError(
        "cannot serve metrics on {}:{}: the port must be 0 to 65535; set another metrics port, "
        "or 0 for any free port",
        bind_address, port);
  std::string host = bind_address;  // accept "[::1]" as well as "::1"
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc =
          ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found))
    throw ConfigError(
        "cannot serve metrics on {}:{}: getaddrinfo: {}; give a bind address this host resolves, "
        "such as 127.0.0.1 or ::1",
        bind_address, port, ::gai_strerror(rc));
  // The last failure over the addresses found, reported when none of them could listen.
  const char* failed_call = "getaddrinfo";
  int error = EADDRNOTAVAIL;
  for (const addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    // CLOEXEC: plugins and other children must not inherit (and keep open) the metrics port.
    const int fd =
        ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      failed_call = "socket";
      error = errno;
      continue;
    }
    // Lets a restarted run rebind past TIME_WAIT; Linux still refuses a port another socket
    // listens on, so a taken port is still an error.
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
      failed_call = "bind";
    } else if (::listen(fd, 16) != 0) {
      failed_call = "listen";
    } else {
      listen_fd_ = fd;
      continue;
    }
    error = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  // Mostly a taken port (EADDRINUSE), a privileged one (EACCES) or an address this host does
  // not have (EADDRNOTAVAIL): all fixed by choosing another address or port.
  if (listen_fd_ < 0)
    throw ConfigError(
        "cannot serve metrics on {}:{}: {}: {}; set another metrics port, or 0 for any free port",
        bind_address, port, failed_call, std::strerror(error));

  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  try {
    // Out of descriptors or memory: neither the configuration nor a bug in hlm, so plain Error.
    if (stop_fd_ < 0)
      throw Error(
          "cannot serve metrics on {}:{}: eventfd: {}; the process is out of file descriptors or "
          "memory",
          bind_address, port, std::strerror(errno));
    thread_ = std::thread(&MetricsHttpServer::serve, this);
  } catch (...) {
    ::close(listen_fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    throw;
  }
}

MetricsHttpServer::~MetricsHttpServer() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(stop_fd_);
}

void MetricsHttpServer::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0) {
      // Out of descriptors (EMFILE) leaves the connection pending, and poll() would return at
      // once forever: back off instead of spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        pollfd stop = {stop_fd_, POLLIN, 0};
        if (::poll(&stop, 1, 100) > 0) return;
      }
      continue;
    }
    try {
      handle(client);
    } catch (...) {
      // A failed scrape must not end the thread (and with it the process).
    }
    ::close(client);
  }
}

void MetricsHttpServer::handle(int client) {
  const std::string head = read_head(client, stop_fd_, Clock::now() + kRequestTimeout);
  if (head.empty()) return;
  const std::string line = head.substr(0, head.find_first_of("\r\n"));
  const size_t space1 = line.find(' ');
  const size_t space2 = line.find(' ', space1 == std::string::npos ? space1 : space1 + 1);
  std::string reply;
  if (space1 == std::string::npos || space2 == std::string::npos) {
    reply = response(400, "Bad Request", "text/plain; charset=utf-8", "bad request\n", false);
  } else {
    const std::string method = line.substr(0, space1);
    std::string path = line.substr(space1 + 1, space2 - space1 - 1);
    path = path.substr(0, path.find('?'));
    const bool head_only = method == "HEAD";
    if (method != "GET" && !head_only) {
      reply = response(405, "Method Not Allowed", "text/plain; charset=utf-8",
                       "method not allowed\n", false, "Allow: GET, HEAD\r\n");
    } else if (path == "/metrics") {
      std::string body;
      try {
        body = render_metrics();
      } catch (const std::exception& e) {
        reply = response(500, "Internal Server Error", "text/plain; charset=utf-8",
                         std::string(e.what()) + "\n", head_only);
      }
      if (reply.empty())
        reply = response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, head_only);
    } else if (path == "/") {
      reply = response(200, "OK", "text/html; charset=utf-8",
                       "<html><body><a href=\"/metrics\">/metrics</a></body></html>\n", head_only);
    } else {
      reply = response(404, "Not Found", "text/plain; charset=utf-8", "not found\n", head_only);
    }
  }
  send_all(client, reply, stop_fd_, Clock::now() + kResponseTimeout);
  // Close gracefully: unread request bytes at close() would send a reset that can destroy the
  // response before the client reads it, so half-close and drain briefly first.
  ::shutdown(client, SHUT_WR);
  const Clock::time_point drain_deadline = Clock::now() + std::chrono::seconds(1);
  char sink[1024];
  while (wait_ready(client, POLLIN, stop_fd_, drain_deadline) &&
         ::recv(client, sink, sizeof(sink), 0) > 0) {
  }
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
