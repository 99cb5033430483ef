// Run directories: owner-only, and one per run even when runs start in the same second.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "engine/run_directory.h"

namespace fs = std::filesystem;

TEST(RunDirectory, IsOwnerOnlyAndUniqueForRunsStartedTogether) {
  const fs::path runs = fs::temp_directory_path() / ("hlm_run_dirs_" + std::to_string(::getpid()));
  fs::remove_all(runs);
  std::vector<std::string> dirs(8);
  std::vector<std::thread> starts;
  for (size_t i = 0; i < dirs.size(); ++i)
    starts.emplace_back([&, i] { dirs[i] = hlm::new_run_directory(runs.string(), "wf", "same"); });
  for (auto& t : starts) t.join();
  EXPECT_EQ(std::set<std::string>(dirs.begin(), dirs.end()).size(), dirs.size());
  for (const auto& dir : dirs) {
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    EXPECT_EQ(fs::status(dir).permissions() & fs::perms::mask, fs::perms::owner_all) << dir;
  }
  fs::remove_all(runs);
}
