// Running SLURM's client programs (see slurm_commands.h).
#include "slurm/slurm_commands.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "dist/slurm_layout.h"
#include "hlm/errors.h"
#include "util/stop_signal.h"

namespace hlm {

CommandOutput run_program(const std::vector<std::string>& argv) {
  int fds[2];
  if (argv.empty() || pipe(fds) != 0) throw InternalError("cannot start a program: {}", "pipe");
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw InternalError("cannot start {}: fork failed", argv[0]);
  }
  if (pid == 0) {
    restore_signal_mask_in_child();
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot start %s: %s\n", args[0], std::strerror(errno));
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

std::string slurm_node_address(const std::string& node) {
  const CommandOutput shown = run_program({"scontrol", "show", "node", "-o", node});
  std::istringstream fields(shown.output);
  for (std::string field; shown.status == 0 && fields >> field;)
    if (field.rfind("NodeAddr=", 0) == 0 && field.size() > 9) return field.substr(9);
  throw ConfigError(
      "node '{}' (the first host of SLURM_JOB_NODELIST): scontrol show node gives no NodeAddr "
      "({}); set MASTER_ADDR to the address of the node that runs rank 0",
      node, shown.output.empty() ? "no output" : shown.output);
}

std::string first_allocated_node() {
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (!list || !*list)
    throw ConfigError(
        "the srun launcher runs inside a SLURM allocation, but SLURM_JOB_NODELIST is not set; "
        "submit with hlm submit (or sbatch), or run without --launcher srun");
  return expand_hostlist(list).front();
}

}  // namespace hlm
