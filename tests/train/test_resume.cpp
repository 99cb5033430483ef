// Exact resume and restarts through the hlm binary: a run stopped with SIGTERM checkpoints,
// exits asking for a requeue and, resumed, ends with the uninterrupted run's losses to the
// last digit; a rank killed with SIGKILL is restarted by the multiproc runner.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::run_dir_of;
using hlm::test::run_hlm;
using hlm::test::run_hlm_watching;
using hlm::test::ScratchDir;

namespace {

const std::string kWorkflow = "tests/fixtures/train_small.yaml";

// The newest child of `parent` whose command line is `.../hlm rank ...`, or -1. Only children
// of the run under test count: ctest runs other tests' ranks at the same time.
pid_t newest_rank_process(pid_t parent) {
  pid_t newest = -1;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string stat_line;
    std::getline(stat, stat_line);
    const size_t close = stat_line.rfind(')');  // "pid (comm) state ppid ..."
    if (close == std::string::npos) continue;
    std::istringstream fields(stat_line.substr(close + 2));
    std::string state;
    pid_t ppid = -1;
    fields >> state >> ppid;
    if (ppid != parent) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> argv;
    for (size_t start = 0, end; start < cmdline.size(); start = end + 1) {
      end = cmdline.find('\0', start);
      if (end == std::string::npos) end = cmdline.size();
      argv.push_back(cmdline.substr(start, end - start));
    }
    if (argv.size() >= 2 && argv[1] == "rank" && argv[0].size() >= 4 &&
        argv[0].compare(argv[0].size() - 4, 4, "/hlm") == 0)
      newest = std::max<pid_t>(newest, pid_t(std::stol(name)));
  }
  return newest;
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Weights are compared byte for byte: a LibTorch archive of equal tensors is identical.
void expect_same_weights(const fs::path& a, const fs::path& b) {
  const std::string want = file_bytes(a / "pretrain" / "model.pt");
  ASSERT_FALSE(want.empty()) << a;
  EXPECT_TRUE(want == file_bytes(b / "pretrain" / "model.pt"))
      << "final weights differ: " << a << " vs " << b;
}

// With dropout, on 1 and 2 ranks: the random stream (dropout masks) must continue where the
// checkpoint left it, on every rank.
TEST(Resume, ARunStoppedBySigtermResumesToTheUninterruptedLossesExactly) {
  for (const std::string world : {"1", "2"}) {
    SCOPED_TRACE("world size " + world);
    ScratchDir runs("hlm_resume_w" + world);
    const std::string args =
        kWorkflow + " vars.world_size=" + world + " pretrain.model.dropout=0.1";
    const auto whole = run_hlm("run " + args + " --runs-dir " + (runs.path / "a").string());
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    const fs::path whole_dir = run_dir_of(whole.output);
    const auto expected = hlm::test::stage_manifest(whole_dir, "pretrain")["results"];

    bool signalled = false;
    const auto stopped =
        run_hlm_watching("run " + args + " --runs-dir " + (runs.path / "b").string(),
                         [&](pid_t pid, const std::string& line) {
                           if (!signalled && line.find("step 250/") != std::string::npos) {
                             kill(pid, SIGTERM);
                             signalled = true;
                           }
                         });
    ASSERT_TRUE(signalled) << stopped.output;
    ASSERT_EQ(stopped.exit_code, 75) << stopped.output;  // asks the scheduler for a requeue
    const fs::path run_dir = run_dir_of(stopped.output);
    EXPECT_EQ(hlm::test::stage_manifest(run_dir, "pretrain")["status"], "interrupted");

    const auto resumed =
        run_hlm("run --resume " + run_dir.string() + " --runs-dir " + (runs.path / "b").string());
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("resumed from"), std::string::npos) << resumed.output;
    const auto got = hlm::test::stage_manifest(run_dir, "pretrain")["results"];
    const auto want_losses = expected["losses"].get<std::vector<double>>();
    const auto got_losses = got["losses"].get<std::vector<double>>();
    ASSERT_EQ(got_losses.size(), want_losses.size());
    for (size_t i = 0; i < want_losses.size(); ++i)
      ASSERT_EQ(got_losses[i], want_losses[i]) << "step " << i + 1;
    EXPECT_EQ(got["eval_loss"].get<double>(), expected["eval_loss"].get<double>());
    expect_same_weights(whole_dir, run_dir);
  }
}

// checkpoint_every 100 over 1500 steps: only the newest keep_checkpoints (default 3) remain,
// each complete.
TEST(Resume, KeepsOnlyTheNewestCompleteCheckpoints) {
  ScratchDir runs("hlm_keep_checkpoints");
  const auto r = run_hlm("run " + kWorkflow + " --runs-dir " + runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> kept;
  for (const auto& entry :
       fs::directory_iterator(run_dir_of(r.output) / "pretrain" / "checkpoints")) {
    kept.push_back(entry.path().filename().string());
    EXPECT_TRUE(fs::exists(entry.path() / "DONE")) << entry.path();
  }
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"step_1300", "step_1400", "step_1500"}));
}

// Over Gloo and over the shm backend, whose surviving rank waits in shared memory. The
// restarted run must end with the uninterrupted run's weights.
TEST(Resume, AKilledRankIsRestartedFromTheNewestCheckpointAndTheRunFinishes) {
  for (const std::string backend : {"gloo", "shm"}) {
    SCOPED_TRACE(backend);
    ScratchDir runs("hlm_restart_" + backend);
    const std::string args = kWorkflow + " vars.world_size=2 pretrain.backend.plugin=" + backend;
    const auto whole = run_hlm("run " + args + " --runs-dir " + (runs.path / "a").string());
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    bool killed = false;
    const auto r = run_hlm_watching(
        "run " + args + " --runs-dir " + (runs.path / "b").string(),
        [&](pid_t hlm, const std::string& line) {
          if (!killed && line.find("step 300/") != std::string::npos) {
            const pid_t rank = newest_rank_process(hlm);  // a child running `hlm rank JOB`
            killed = rank > 0 && kill(rank, SIGKILL) == 0;
          }
        });
    ASSERT_TRUE(killed) << r.output;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("restarting the ranks from the newest checkpoint"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("resumed from"), std::string::npos) << r.output;
    EXPECT_EQ(hlm::test::stage_manifest(run_dir_of(r.output), "pretrain")["status"], "done");
    expect_same_weights(run_dir_of(whole.output), run_dir_of(r.output));
  }
}

// Twenty SIGKILLs of the rank at random moments, with a checkpoint every 5 steps, so many land
// while one is being written (between a file's temp copy and its rename, before DONE, while
// old ones are removed). Each restart must resume from a complete checkpoint, never a half one
// (a torn file would fail its checksum and use up the restarts), and the run must end with
// the uninterrupted run's weights.
TEST(Resume, TwentyKillsAtRandomMomentsNeverResumeFromAHalfWrittenCheckpoint) {
  constexpr int kKills = 20;
  ScratchDir runs("hlm_kill_loop");
  // Two ranks: a run of one rank trains inside the hlm process, with no rank to kill. 4000
  // steps, not the fixture's 1500: on a fast machine 1500 ended before half the kills landed.
  const std::string args = kWorkflow + " vars.world_size=2 pretrain.steps=4000" +
                           " pretrain.checkpoint_every=5" +
                           " pretrain.max_restarts=" + std::to_string(kKills);
  const auto whole = run_hlm("run " + args + " --runs-dir " + (runs.path / "a").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.output;

  std::atomic<pid_t> hlm_pid{-1};
  std::atomic<bool> finished{false};
  std::atomic<int> kills{0};
  std::thread killer([&] {
    std::mt19937 random(20261125);
    pid_t last_killed = -1;
    while (!finished && kills < kKills) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const pid_t rank = hlm_pid > 0 ? newest_rank_process(hlm_pid) : -1;
      if (rank <= 0 || rank == last_killed) continue;
      // Somewhere in the rank's first 2 s: loading and resuming, or a few hundred steps in.
      std::this_thread::sleep_for(std::chrono::milliseconds(random() % 2000));
      if (!finished && kill(rank, SIGKILL) == 0) {
        last_killed = rank;
        ++kills;
      }
    }
  });
  const auto r = run_hlm_watching("run " + args + " --runs-dir " + (runs.path / "b").string(),
                                  [&](pid_t hlm, const std::string&) { hlm_pid = hlm; });
  finished = true;
  killer.join();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::printf("%d kills landed\n", kills.load());
  EXPECT_GE(kills, kKills / 2) << "the run finished before most kills landed";
  EXPECT_EQ(r.output.find("checksum mismatch"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("incomplete checkpoint"), std::string::npos) << r.output;
  expect_same_weights(run_dir_of(whole.output), run_dir_of(r.output));
}

// A rank that stops answering inside a collective (SIGSTOP: alive, holding its sockets, silent)
// must not hang the run: the others give up after the backend's timeout_s, the run fails with a
// message saying so, and the stopped rank is cleaned up with the rest.
// timeout_s is 10, not less: the ranks' first collectives also wait for the slower rank's
// start-up, which a loaded machine can stretch by seconds.
TEST(Resume, ARankHangingInACollectiveEndsTheRunAfterTheBackendTimeout) {
  for (const std::string backend : {"gloo", "shm"}) {
    SCOPED_TRACE(backend);
    ScratchDir runs("hlm_hang_" + backend);
    const std::string args = kWorkflow + " vars.world_size=2 pretrain.max_restarts=0" +
                             " pretrain.backend.plugin=" + backend +
                             " pretrain.backend.timeout_s=10 --runs-dir " + runs.path.string();
    pid_t stopped = -1;
    const auto started = std::chrono::steady_clock::now();
    const auto r = run_hlm_watching("run " + args, [&](pid_t hlm, const std::string& line) {
      if (stopped < 0 && line.find("step 200/") != std::string::npos) {
        stopped = newest_rank_process(hlm);
        if (stopped > 0) kill(stopped, SIGSTOP);
      }
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const bool outlived = stopped > 0 && kill(stopped, 0) == 0;
    if (outlived) kill(stopped, SIGKILL);  // the run left it behind: clean up, then fail
    ASSERT_GT(stopped, 0) << r.output;
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_LT(seconds, 60) << "the run waited on the stopped rank:\n" << r.output;
    EXPECT_NE(r.output.find("exited with"), std::string::npos) << r.output;
    EXPECT_FALSE(outlived) << "the stopped rank outlived the run";
  }
}

}  // namespace
