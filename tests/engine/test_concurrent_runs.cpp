// Runs of one workflow started at the same time, into one runs folder: each gets a run
// directory of its own and finishes, neither corrupts the other's stages or the shared stage
// cache (runs/.cache/<key>, a pointer each finished stage writes atomically), and a later run
// reuses a finished stage through that cache, however the two writers interleaved.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <set>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::CommandResult;
using hlm::test::run_dir_of;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;
using hlm::test::stage_manifest;

namespace {

TEST(ConcurrentRuns, TwoRunsAtOnceAndALaterOneShareTheCacheWithoutCorruptingIt) {
  ScratchDir runs("hlm_concurrent_runs");
  const std::string args =
      "run tests/fixtures/train_small.yaml pretrain.steps=40 --runs-dir " + runs.path.string();
  auto first = std::async(std::launch::async, [&] { return run_hlm(args); });
  auto second = std::async(std::launch::async, [&] { return run_hlm(args); });
  const CommandResult a = first.get(), b = second.get();
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const fs::path dir_a = run_dir_of(a.output), dir_b = run_dir_of(b.output);
  ASSERT_NE(dir_a, dir_b);
  for (const fs::path& dir : {dir_a, dir_b})
    for (const std::string stage : {"tokenize", "pretrain"}) {
      EXPECT_EQ(stage_manifest(dir, stage)["status"], "done") << dir << " " << stage;
    }

  // Whichever run wrote a cache pointer last, it names a finished stage a new run reuses.
  const auto later = run_hlm(args);
  ASSERT_EQ(later.exit_code, 0) << later.output;
  const fs::path dir_c = run_dir_of(later.output);
  for (const std::string stage : {"tokenize", "pretrain"}) {
    const auto m = stage_manifest(dir_c, stage);
    EXPECT_EQ(m["status"], "done") << later.output;
    EXPECT_TRUE(m.contains("reused_from")) << m.dump(2);
    EXPECT_NE(later.output.find(stage + ": reused from cache"), std::string::npos) << later.output;
  }
  std::set<std::string> pointed;
  for (const auto& entry : fs::directory_iterator(runs.path / ".cache")) {
    std::string target;
    std::getline(std::ifstream(entry.path()), target);
    ASSERT_TRUE(fs::exists(fs::path(target) / "manifest.json")) << entry.path() << " -> " << target;
    EXPECT_EQ(nlohmann::json::parse(hlm::test::read_text(fs::path(target) / "manifest.json"))
                  .value("cache_key", ""),
              entry.path().filename().string());
    pointed.insert(fs::path(target).parent_path().string());
  }
  EXPECT_FALSE(pointed.empty());
  for (const auto& run : pointed)
    EXPECT_TRUE(run == dir_a.string() || run == dir_b.string()) << run;
}

}  // namespace
