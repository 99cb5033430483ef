// Stop signals are taken by a waiting thread, never by a thread running GEMMs (see
// util/stop_signal.h). The tests without LibTorch are in test_stop_signal_thread.cpp.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "hlm/gemm.h"
#include "util/stop_signal.h"

namespace {

using Clock = std::chrono::steady_clock;

// Exit code of a child that trained on through the signals and saw them.
constexpr int kSawTheStop = 42;

// oneDNN GEMMs while thousands of SIGUSR1 arrive: with a handler on the computing thread the
// heap breaks within seconds (glibc aborts on a free); with the waiting thread it does not.
TEST(StopSignal, ThousandsOfSignalsDuringGemmsCorruptNothing) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    hlm::install_stop_handlers();
    (void)!::write(ready[1], "r", 1);  // signals sent before this would end it by default
    at::set_num_threads(1);
    // The products of a small GPT's forward and backward: rows x inner x columns, every
    // transposition (oneDNN picks its kernel by shape and layout).
    const int64_t shapes[][3] = {{256, 32, 32}, {256, 32, 96}, {32, 256, 32},
                                 {256, 64, 32}, {32, 32, 256}, {512, 128, 384}};
    const auto until = Clock::now() + std::chrono::seconds(3);
    for (int64_t i = 0; Clock::now() < until; ++i) {
      const auto& [m, k, n] = shapes[i % 6];
      const bool ta = i / 6 % 2, tb = i / 12 % 2;
      const auto a = ta ? torch::randn({k, m}) : torch::randn({m, k});
      const auto b = tb ? torch::randn({n, k}) : torch::randn({k, n});
      (void)hlm::gemm(a, b, ta, tb).sum().item<float>();  // oneDNN allocates and frees scratch
    }
    ::_exit(hlm::stop_signal_received() ? kSawTheStop : 1);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  int status = 0;
  int sent = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    ::kill(pid, SIGUSR1);
    ++sent;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  EXPECT_GT(sent, 1000);
  ASSERT_TRUE(WIFEXITED(status)) << "the process died of signal " << WTERMSIG(status) << " after "
                                 << sent << " stop signals";
  EXPECT_EQ(WEXITSTATUS(status), kSawTheStop);
}

}  // namespace
