// A program started for a test (a Prometheus server, promtool) with its output in a log file,
// stopped with SIGTERM, then SIGKILL, when the test is done with it.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace hlm::test {

// Starts a program with stdout and stderr in log_path; stops it (TERM, then KILL) on scope exit.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::string& log_path) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() { stop(); }
  bool running() {
    if (pid_ > 0 && ::waitpid(pid_, &status_, WNOHANG) == pid_) reap();
    return pid_ > 0;
  }
  // Exit status, or -1 when it did not start or died of a signal.
  int wait() {
    if (pid_ > 0 && ::waitpid(pid_, &status_, 0) == pid_) reap();
    return exited_ && WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 50 && running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (running()) ::kill(pid_, SIGKILL);
    if (pid_ > 0 && ::waitpid(pid_, &status_, 0) == pid_) reap();
  }

 private:
  void reap() {
    pid_ = -1;
    exited_ = true;
  }
  pid_t pid_ = -1;
  int status_ = 0;
  bool exited_ = false;
};

}  // namespace hlm::test
