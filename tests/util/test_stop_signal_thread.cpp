// The stop-signal thread (util/stop_signal.h), without LibTorch so the sanitizer builds run
// it: a signal sets the flag that every polling thread sees, and programs started from hlm get
// the usual signal mask back.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "util/stop_signal.h"

namespace {

// Four threads poll the flag as the trainer and the launchers do; one SIGTERM from outside
// reaches all of them (exit 0), within 10 s.
TEST(StopSignalThread, OneSignalIsSeenByEveryThreadPollingTheFlag) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    hlm::install_stop_handlers();
    std::atomic<int> saw{0};
    std::vector<std::thread> pollers;
    for (int t = 0; t < 4; ++t)
      pollers.emplace_back([&saw] {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!hlm::stop_signal_received() && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        if (hlm::stop_signal_received()) ++saw;
      });
    (void)!::write(ready[1], "r", 1);
    for (auto& p : pollers) p.join();
    ::_exit(saw == 4 ? 0 : 1);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the process died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a polling thread never saw the stop";
}

// A program forked and executed by hlm must not inherit the blocked stop signals: srun and
// the ranks act on them.
TEST(StopSignalThread, ProgramsStartedAfterwardsGetTheSignalsBack) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    hlm::install_stop_handlers();
    const pid_t program = ::fork();
    if (program == 0) {
      hlm::restore_signal_mask_in_child();
      ::execl("/bin/sh", "sh", "-c", "kill -USR1 $$; exit 0", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int program_status = 0;
    ::waitpid(program, &program_status, 0);
    ::_exit(WIFSIGNALED(program_status) && WTERMSIG(program_status) == SIGUSR1 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the started program ignored SIGUSR1";
}

}  // namespace
