// Which cores a rank keeps to, and that the binding reaches every thread of the process.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "util/core_binding.h"

namespace {

using hlm::plan_core_binding;
using Cpus = std::vector<int>;

TEST(CoreBinding, RanksTakeDisjointSlicesInTheGivenOrder) {
  const Cpus allowed = {0, 2, 4, 6, 1, 3, 5, 7};  // first siblings first
  EXPECT_EQ(plan_core_binding(allowed, 0, 4, 2).cpus, (Cpus{0, 2}));
  EXPECT_EQ(plan_core_binding(allowed, 3, 4, 2).cpus, (Cpus{5, 7}));
  EXPECT_EQ(plan_core_binding(allowed, 1, 2, 1).cpus, (Cpus{2}));
  EXPECT_EQ(plan_core_binding(allowed, 1, 2, 1).reason, "bound to CPU 2");
}

TEST(CoreBinding, LeavesALoneRankOrRanksThatDoNotFitUnbound) {
  const Cpus two = {0, 1};
  EXPECT_TRUE(plan_core_binding(two, 0, 1, 1).cpus.empty());
  const auto crowded = plan_core_binding(two, 1, 2, 2);
  EXPECT_TRUE(crowded.cpus.empty());
  EXPECT_NE(crowded.reason.find("need 4 CPUs"), std::string::npos) << crowded.reason;
  EXPECT_TRUE(plan_core_binding(two, 0, 3, 1).cpus.empty());
  // A zero thread count is one thread, as set_compute_threads takes it.
  EXPECT_EQ(plan_core_binding(two, 1, 2, 0).cpus, (Cpus{1}));
}

TEST(CoreBinding, AllowedCpusAreThisProcessesMask) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  const Cpus cpus = hlm::allowed_cpus_spread();
  EXPECT_EQ(int(cpus.size()), CPU_COUNT(&mask));
  for (int cpu : cpus) EXPECT_TRUE(CPU_ISSET(cpu, &mask)) << cpu;
}

// In a child process (the binding moves every thread of the process it runs in): a thread
// started before the binding and one started after both end up on the rank's CPU.
TEST(CoreBinding, MovesThreadsStartedBeforeAndAfter) {
  const Cpus allowed = hlm::allowed_cpus_spread();
  if (allowed.size() < 2) GTEST_SKIP() << "needs 2 CPUs, this process may use " << allowed.size();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto on_rank_cpu = [&] {
      cpu_set_t mask;
      return sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) == 1 &&
             CPU_ISSET(allowed[1], &mask);
    };
    bool before_ok = false, go = false;
    std::thread before([&] {
      while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) usleep(1000);
      before_ok = on_rank_cpu();
    });
    const auto plan = hlm::bind_rank_to_cores(1, 2, 1);
    __atomic_store_n(&go, true, __ATOMIC_RELEASE);
    before.join();
    bool after_ok = false;
    std::thread([&] { after_ok = on_rank_cpu(); }).join();
    _exit(plan.cpus == Cpus{allowed[1]} && on_rank_cpu() && before_ok && after_ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
