// A stalled rank is seen from outside: rank 1 of a 2-rank pretraining is stopped with SIGSTOP;
// within stall_seconds and a moment, hlm run logs which rank made no step and what it was
// doing, and its /metrics shows hlm_train_stalled{rank="1"} 1; after SIGCONT the run finishes
// and the stage's summary names rank 1.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/hlm_cli.h"
#include "support/http_get.h"

namespace fs = std::filesystem;

namespace {

// The hlm rank process of `rank` among the children of `parent`.
pid_t rank_process(pid_t parent, int rank) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, comm, state;
    pid_t ppid = 0;
    stat >> pid >> comm >> state >> ppid;
    if (ppid != parent) continue;
    std::ifstream environ(entry.path() / "environ");
    const std::string env((std::istreambuf_iterator<char>(environ)), {});
    if (env.find(std::string("RANK=") + std::to_string(rank) + '\0') == 0 ||
        env.find(std::string("\0RANK=", 6) + std::to_string(rank) + '\0') != std::string::npos)
      return pid_t(std::stol(name));
  }
  return -1;
}

TEST(StallWatch, AStoppedRankIsNamedWithItsPhaseAndShowsInTheMetrics) {
  hlm::test::ScratchDir runs("hlm_stall");
  constexpr double kStallSeconds = 2;
  int port = 0;
  pid_t stopped = -1;
  std::chrono::steady_clock::time_point stopped_at;
  double seen_after = -1;
  std::string warning, scraped;
  const auto r = hlm::test::run_hlm_watching(
      "run tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=1500 "
      "settings.stall_seconds=2 --runs-dir " +
          runs.path.string(),
      [&](pid_t hlm, const std::string& line) {
        const std::string marker = "metrics: http://127.0.0.1:";
        // The run's own endpoint is printed first; the ranks print theirs later.
        if (const size_t at = line.find(marker); at != std::string::npos && port == 0)
          port = std::stoi(line.substr(at + marker.size()));
        if (stopped < 0 && line.find("step 100/") != std::string::npos) {
          stopped = rank_process(hlm, 1);
          if (stopped > 0) {
            ::kill(stopped, SIGSTOP);
            stopped_at = std::chrono::steady_clock::now();
          }
        }
        if (stopped > 0 && warning.empty() &&
            line.find("rank 1 made no step") != std::string::npos) {
          warning = line;
          seen_after =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
          scraped = hlm::test::http_get(port, "/metrics");
          ::kill(stopped, SIGCONT);
        }
      });
  if (stopped > 0) ::kill(stopped, SIGCONT);  // whatever happened above
  ASSERT_GT(stopped, 0) << "rank 1's process not found\n" << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_FALSE(warning.empty()) << r.output;
  EXPECT_LT(seen_after, kStallSeconds + 1.5);
  EXPECT_NE(warning.find("now in: "), std::string::npos) << warning;
  EXPECT_NE(scraped.find("hlm_train_stalled{rank=\"1\""), std::string::npos) << scraped;
  const size_t at = scraped.find("hlm_train_stalled{rank=\"1\"");
  if (at != std::string::npos) {
    EXPECT_EQ(scraped.substr(scraped.find("} ", at) + 2, 1), "1") << scraped.substr(at, 120);
  }
  const fs::path run_dir = hlm::test::run_dir_of(r.output);
  std::ifstream manifest(run_dir / "pretrain" / "manifest.json");
  const auto results = nlohmann::json::parse(manifest)["results"];
  ASSERT_TRUE(results.contains("stalled_ranks")) << results.dump().substr(0, 400);
  EXPECT_NE(std::find(results["stalled_ranks"].begin(), results["stalled_ranks"].end(), 1),
            results["stalled_ranks"].end());
}

}  // namespace
