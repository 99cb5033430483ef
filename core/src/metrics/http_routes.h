// The /metrics server's settings and routes (see http_exposer.h), apart from its sockets: the
// fuzz target for HTTP requests feeds its inputs to a server configured by this same function.
#pragma once
#include <functional>
#include <string>

namespace httplib {
class Server;
}

namespace hlm {

// Timeouts, limits, the worker pool, and the routes: /metrics answered with render_metrics(),
// /healthz, /, 405 for methods other than GET and HEAD, and plain-text error pages.
void configure_metrics_server(httplib::Server& server, std::function<std::string()> render_metrics);

}  // namespace hlm
