// Heartbeats read the two ways the stall watcher reads them: the mapped file of a rank on this
// host, and the copy a rank on another node keeps on the shared filesystem; and a watcher
// reading copies names a rank whose steps stop.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "metrics/heartbeat.h"
#include "metrics/stall_watcher.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

// Calls `poll` until it returns true or `seconds` pass.
template <typename F>
bool within(double seconds, F poll) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (poll()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return poll();
}

}  // namespace

TEST(Heartbeat, TheCopyFollowsTheMappedStateAndStopsWithTheWriter) {
  const hlm::test::ScratchDir dir_scratch("hlm_heartbeat_copy");
  const fs::path& dir = dir_scratch.path;
  const std::string path = (dir / "heartbeat.rank0").string();
  {
    hlm::HeartbeatWriter writer(path, 0.05);
    writer.enter(hlm::RankActivity::kForward);
    EXPECT_TRUE(within(2, [&] {
      const auto copy = hlm::read_heartbeat_copy(path);
      return copy && copy->activity == hlm::RankActivity::kForward;
    }));
    writer.step_finished(3);
    EXPECT_TRUE(within(2, [&] {
      const auto copy = hlm::read_heartbeat_copy(path);
      return copy && copy->steps == 3 && copy->activity == hlm::RankActivity::kBetweenSteps;
    }));
    const auto mapped = hlm::read_heartbeat(path);
    ASSERT_TRUE(mapped);
    EXPECT_EQ(mapped->steps, 3u);
  }
  EXPECT_EQ(hlm::read_heartbeat_copy(path)->steps, 3u);  // the last state stays readable
  EXPECT_FALSE(hlm::read_heartbeat_copy((dir / "heartbeat.rank9").string()));
}

TEST(Heartbeat, AWatcherReadingCopiesNamesTheRankWhoseStepsStop) {
  const hlm::test::ScratchDir dir_scratch("hlm_heartbeat_watch");
  const fs::path& dir = dir_scratch.path;
  hlm::StallWatcher watcher(dir.string(), 2, "pretrain", 1.5, hlm::StallWatcher::Source::kCopies);
  hlm::HeartbeatWriter rank0((dir / "heartbeat.rank0").string(), 0.05);
  hlm::HeartbeatWriter rank1((dir / "heartbeat.rank1").string(), 0.05);
  uint64_t steps = 0;
  // Rank 0 keeps stepping; rank 1 made one step and then none.
  rank1.step_finished(1);
  rank1.enter(hlm::RankActivity::kAllreduce);
  EXPECT_TRUE(within(8, [&] {
    rank0.step_finished(++steps);
    watcher.check();
    return watcher.stalled_ranks().count(1) == 1;
  }));
  EXPECT_EQ(watcher.stalled_ranks().count(0), 0u);
}
