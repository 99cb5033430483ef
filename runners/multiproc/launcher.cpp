// Rank processes with fork/exec, their output read through pipes with poll (see launcher.h).
#include "multiproc/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "hlm/errors.h"
#include "util/run_lock.h"
#include "util/stop_signal.h"

namespace hlm {

int free_tcp_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    throw InternalError("cannot find a free TCP port: {}", std::strerror(errno));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

namespace {

struct Rank {
  pid_t pid = -1;
  int out_fd = -1;
  std::string partial;  // an output line not yet ended by '\n'
  std::unique_ptr<std::ofstream> log;
  int exit_code = -1;
};

// The environment of rank `rank`: this process's, with the rank variables and the options'
// additions set.
std::vector<std::string> rank_environment(const LaunchOptions& o, int rank, int port) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (o.rank_variables) {
    vars["RANK"] = vars["LOCAL_RANK"] = std::to_string(rank);
    vars["WORLD_SIZE"] = vars["LOCAL_WORLD_SIZE"] = std::to_string(o.nproc);
    vars["MASTER_ADDR"] = o.master_addr;
    vars["MASTER_PORT"] = std::to_string(port);
  }
  for (const auto& [k, v] : o.env) vars[k] = v;
  std::vector<std::string> env;
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  return env;
}

// Everything the child needs is built before fork: between fork and exec a child of a
// threaded process may only make async-signal-safe calls (no malloc, no setenv, no stdio).
pid_t spawn(const LaunchOptions& o, int rank, int port, int& out_fd) {
  const std::vector<std::string> env_strings = rank_environment(o, rank, port);
  std::vector<char*> envp, argv;
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string cannot_start = "cannot start " + o.argv.at(0) + "\n";
  int fds[2];
  if (pipe(fds) != 0) throw InternalError("pipe failed");
  const int lock_fd = held_run_lock_fd();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw InternalError("fork failed");
  if (pid == 0) {
    restore_signal_mask_in_child();
    // A rank ends with its launcher: killed with it (SIGKILL included), the launcher's death
    // sends it the stop signal, and it checkpoints and exits. A launcher that died before this
    // line is caught by its parent's PID.
    prctl(PR_SET_PDEATHSIG, o.stop_signal);
    if (getppid() != parent) _exit(128 + o.stop_signal);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    // Only stdin, stdout and stderr go to the rank (see subprocess.cpp), and the run's lock
    // (util/run_lock.h), which it then holds until it exits.
    if (lock_fd > 2) {
      close_range(3, unsigned(lock_fd) - 1, 0);
      close_range(unsigned(lock_fd) + 1, ~0U, 0);
      fcntl(lock_fd, F_SETFD, 0);
    } else {
      close_range(3, ~0U, 0);
    }
    execvpe(argv[0], argv.data(), envp.data());  // a launcher such as srun is found on PATH
    (void)!write(STDERR_FILENO, cannot_start.data(), cannot_start.size());
    _exit(127);
  }
  close(fds[1]);
  out_fd = fds[0];
  return pid;
}

void emit(const LaunchOptions& o, Rank& r, int rank, const std::string& line) {
  if (r.log) *r.log << line << '\n' << std::flush;
  if (o.on_line)
    o.on_line(rank, line);
  else
    std::fprintf(stderr, "[rank %d] %s\n", rank, line.c_str());
}

// Reads what is available; returns false at end of file.
bool pump(const LaunchOptions& o, Rank& r, int rank) {
  char buf[4096];
  const ssize_t n = read(r.out_fd, buf, sizeof(buf));
  if (n <= 0) {
    if (!r.partial.empty()) emit(o, r, rank, r.partial);
    r.partial.clear();
    return false;
  }
  r.partial.append(buf, size_t(n));
  for (size_t nl; (nl = r.partial.find('\n')) != std::string::npos;) {
    emit(o, r, rank, r.partial.substr(0, nl));
    r.partial.erase(0, nl + 1);
  }
  return true;
}

int decode_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

size_t open_pipes(const std::vector<Rank>& ranks) {
  size_t n = 0;
  for (const auto& r : ranks) n += r.out_fd >= 0;
  return n;
}

// Waits up to timeout_ms for output and forwards what came, closing pipes at end of file.
void pump_all(const LaunchOptions& o, std::vector<Rank>& ranks, int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<size_t> owner;
  for (size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].out_fd >= 0) {
      fds.push_back({ranks[r].out_fd, POLLIN, 0});
      owner.push_back(r);
    }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  poll(fds.data(), fds.size(), timeout_ms);
  for (size_t i = 0; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    Rank& r = ranks[owner[i]];
    if (!pump(o, r, int(owner[i]))) {
      close(r.out_fd);
      r.out_fd = -1;
    }
  }
}

// Asks every running rank to stop, then kills what is left after the grace period. Output
// is still read meanwhile: a rank that writes much while stopping must not block on a full
// pipe and be killed for it. Ranks reaped here keep their exit code.
void stop_all(const LaunchOptions& o, std::vector<Rank>& ranks) {
  for (auto& r : ranks)
    if (r.exit_code < 0) kill(r.pid, SIGTERM);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(o.grace_seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    bool alive = false;
    for (auto& r : ranks) {
      int status = 0;
      if (r.exit_code < 0 && waitpid(r.pid, &status, WNOHANG) == r.pid)
        r.exit_code = decode_status(status);
      alive = alive || r.exit_code < 0;
    }
    if (!alive) return;
    pump_all(o, ranks, 50);
  }
  for (auto& r : ranks)
    if (r.exit_code < 0) kill(r.pid, SIGKILL);
}

// One start of every rank on `port`, until all have exited.
LaunchResult launch_once(const LaunchOptions& o, int port) {
  std::vector<Rank> ranks(size_t(o.nproc));
  for (int r = 0; r < o.nproc; ++r) {
    if (!o.log_dir.empty())
      ranks[r].log = std::make_unique<std::ofstream>(
          o.log_dir + "/rank" + std::to_string(r) + ".log", std::ios::app);
    ranks[r].pid = spawn(o, r, port, ranks[r].out_fd);
  }
  LaunchResult result;
  result.exit_codes.assign(size_t(o.nproc), -1);
  bool stop_forwarded = false;
  while (open_pipes(ranks) > 0) {
    if (!stop_forwarded && o.stop_requested && o.stop_requested()) {
      stop_forwarded = true;
      for (auto& r : ranks)
        if (r.exit_code < 0) kill(r.pid, o.stop_signal);
    }
    pump_all(o, ranks, 200);
    if (o.on_poll) o.on_poll();
    // Reap exited ranks; the first failure stops the others (their pipes then close).
    for (int r = 0; r < o.nproc; ++r) {
      int status = 0;
      if (ranks[r].exit_code < 0 && waitpid(ranks[r].pid, &status, WNOHANG) == ranks[r].pid) {
        ranks[r].exit_code = decode_status(status);
        if (ranks[r].exit_code != 0 && result.failed_rank < 0) {
          result.failed_rank = r;
          stop_all(o, ranks);
        }
      }
    }
  }
  for (int r = 0; r < o.nproc; ++r) {
    if (ranks[r].exit_code < 0) {
      int status = 0;
      waitpid(ranks[r].pid, &status, 0);
      ranks[r].exit_code = decode_status(status);
    }
    result.exit_codes[r] = ranks[r].exit_code;
    if (ranks[r].exit_code != 0 && result.failed_rank < 0) result.failed_rank = r;
  }
  return result;
}

}  // namespace

LaunchResult launch_ranks(const LaunchOptions& o) {
  if (o.master_port) return launch_once(o, o.master_port);
  // The picked port is free only until someone else binds it; rank 0 reports losing it.
  for (int attempt = 1;; ++attempt) {
    const LaunchResult result = launch_once(o, o.free_port());
    const bool port_taken = result.failed_rank == 0 && result.exit_codes[0] == kExitAddressInUse;
    if (!port_taken || attempt >= o.port_attempts) return result;
  }
}

}  // namespace hlm
