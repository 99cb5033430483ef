// The multiproc runner: starts N ranks of a command on this host the way
// `torchrun --standalone` does (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), prefixes each rank's output lines with its rank, and stops every rank as soon
// as one fails.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace hlm {

// Exit status of a rank 0 that could not listen on MASTER_PORT (EADDRINUSE): another process
// took the port between the launcher's pick and the rank's bind.
constexpr int kExitAddressInUse = 98;

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_tcp_port();

struct LaunchOptions {
  int nproc = 1;
  std::vector<std::string> argv;           // argv[0] is the executable
  std::map<std::string, std::string> env;  // added to each rank's environment
  // Set RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT; false
  // when the process started is itself a launcher (srun) whose tasks get their own.
  bool rank_variables = true;
  std::string master_addr = "127.0.0.1";
  // 0 = ask free_port for one; when rank 0 then exits with kExitAddressInUse, every rank is
  // started again on a new port (up to port_attempts times in all).
  int master_port = 0;
  std::function<int()> free_port = free_tcp_port;
  int port_attempts = 5;
  std::string log_dir;        // rank<r>.log files here when set
  double grace_seconds = 10;  // SIGTERM to SIGKILL when stopping ranks
  std::function<void(int rank, const std::string& line)> on_line;  // default: stderr
  // Polled while ranks run; when it turns true every rank gets stop_signal once (a graceful
  // stop: ranks checkpoint and exit), e.g. because the launcher itself was asked to stop.
  std::function<bool()> stop_requested;
  // Called every fraction of a second while ranks run (e.g. to watch for stalled ranks).
  std::function<void()> on_poll;
  // SIGTERM for rank processes; SIGUSR1 for srun, which passes USR1 on to its tasks but
  // answers SIGTERM by killing them.
  int stop_signal = 15;
};

struct LaunchResult {
  std::vector<int> exit_codes;  // per rank; 128 + signal for a killed rank
  int failed_rank = -1;         // first rank that failed, -1 when all succeeded
  bool ok() const { return failed_rank < 0; }
};

LaunchResult launch_ranks(const LaunchOptions& options);

}  // namespace hlm
