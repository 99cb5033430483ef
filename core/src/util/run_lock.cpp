// flock(2) on RUN_DIR/run.lock (see run_lock.h).
#include "util/run_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "hlm/errors.h"
#include "util/host.h"

namespace hlm {

namespace {

int g_lock_fd = -1;
std::string g_locked_dir;

std::string lock_path(const std::string& run_dir) { return run_dir + "/run.lock"; }

// "PID HOST" as the holder wrote it.
void read_holder(int fd, RunLockHolder& holder) {
  char buf[512] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return;
  std::istringstream in(std::string(buf, size_t(n)));
  in >> holder.pid >> holder.host;
  holder.on_this_host = holder.host == host_name();
  holder.pid_alive = holder.pid > 0 && holder.on_this_host &&
                     (::kill(pid_t(holder.pid), 0) == 0 || errno == EPERM);
}

std::string describe(const RunLockHolder& h) {
  if (h.pid <= 0) return "another hlm process";
  const std::string who = "hlm (PID " + std::to_string(h.pid) + " on " + h.host + ")";
  if (h.pid_alive || !h.on_this_host) return who;
  return who + ", which has ended, but rank processes it started are still running";
}

}  // namespace

RunLockHolder run_lock_holder(const std::string& run_dir) {
  RunLockHolder holder;
  const int fd = ::open(lock_path(run_dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return holder;  // never locked: no process ever worked in it
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0)
    ::flock(fd, LOCK_UN);
  else
    holder.locked = errno == EWOULDBLOCK;
  if (holder.locked) read_holder(fd, holder);
  ::close(fd);
  return holder;
}

void lock_run_directory(const std::string& run_dir, double wait_seconds) {
  if (g_lock_fd >= 0 && g_locked_dir == run_dir) return;
  const std::string path = lock_path(run_dir);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    throw ConfigError("{}: cannot open the run's lock file: {}; check that {} is writable", path,
                      std::strerror(errno), run_dir);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(int64_t(std::max(0.0, wait_seconds) * 1000));
  bool locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  while (!locked && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  }
  if (!locked) {
    RunLockHolder holder;
    holder.locked = true;
    read_holder(fd, holder);
    ::close(fd);
    throw ConfigError(
        "{}: the run is in use by {}; wait for it to end (hlm status {}), or stop it with "
        "kill -TERM {} and resume after",
        run_dir, describe(holder), run_dir, holder.pid > 0 ? std::to_string(holder.pid) : "PID");
  }
  const std::string line = std::to_string(::getpid()) + " " + host_name() + "\n";
  // A failed write leaves the lock held, with only the holder's name missing from the file.
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, line.data(), line.size(), 0);
  if (g_lock_fd >= 0) ::close(g_lock_fd);
  g_lock_fd = fd;
  g_locked_dir = run_dir;
}

int held_run_lock_fd() { return g_lock_fd; }

}  // namespace hlm
