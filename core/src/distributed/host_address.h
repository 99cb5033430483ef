// Where a rank runs, for its log: the local address it reaches the master on (which tells the
// hosts of a multi-node job apart even when they share a hostname; the node's name is
// node_name() of metrics/metrics.h).
#pragma once
#include <string>

namespace hlm {

// This host's address on the route to host:port (a UDP socket's local address after
// connect(), which sends nothing); "unknown" when the host does not resolve.
std::string local_address_towards(const std::string& host, int port);

}  // namespace hlm
