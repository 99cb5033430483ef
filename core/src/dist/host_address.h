// Where a rank runs, for its log: the node's name and the local address it reaches the master
// on (which tells the hosts of a multi-node job apart even when they share a hostname).
#pragma once
#include <string>

namespace hlm {

// SLURMD_NODENAME inside a SLURM job step, else the host name.
std::string node_name();

// This host's address on the route to host:port (a UDP socket's local address after
// connect(), which sends nothing); "unknown" when the host does not resolve.
std::string local_address_towards(const std::string& host, int port);

}  // namespace hlm
