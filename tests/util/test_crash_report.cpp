// A process that crashes after install_crash_report() writes its stack, then still dies of the
// signal (so launchers see the same exit status as without it).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "util/crash_report.h"

namespace {

TEST(CrashReport, ACrashWritesTheStackAndStillDiesOfTheSignal) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    hlm::install_crash_report();
    std::raise(SIGSEGV);
    ::_exit(0);  // not reached
  }
  ::close(fds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof(buffer))) > 0;)
    output.append(buffer, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
  EXPECT_EQ(output.rfind("fatal signal 11; stack:\n", 0), 0u) << output;
  EXPECT_GT(output.size(), 40u) << output;  // at least one frame
}

}  // namespace
