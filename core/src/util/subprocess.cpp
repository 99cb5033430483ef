// A program run to completion with its output captured (see subprocess.h).
#include "util/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "hlm/errors.h"
#include "util/stop_signal.h"

namespace hlm {

CommandOutput run_program(const std::vector<std::string>& argv) {
  // Everything the child needs is made before fork: between fork and exec only
  // async-signal-safe calls (other threads may hold malloc's or stdio's locks).
  if (argv.empty()) throw InternalError("cannot start a program: no command");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string cannot_start = "cannot start " + argv[0] + "\n";
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw InternalError("cannot start {}: pipe failed", argv[0]);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw InternalError("cannot start {}: fork failed", argv[0]);
  }
  if (pid == 0) {
    restore_signal_mask_in_child();
    dup2(fds[1], STDOUT_FILENO);  // dup2 clears close-on-exec on the copies
    dup2(fds[1], STDERR_FILENO);
    // Descriptors this process opened without close-on-exec (a metrics client's socket, a
    // library's files) stay with hlm: a child holding a scrape's connection open would keep
    // Prometheus waiting on it.
    close_range(3, ~0U, 0);
    execvp(args[0], args.data());
    (void)!write(STDERR_FILENO, cannot_start.data(), cannot_start.size());
    _exit(127);
  }
  close(fds[1]);
  CommandOutput result;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    result.output.append(buf, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace hlm
