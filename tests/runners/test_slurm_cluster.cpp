// hlm on a real two-node SLURM cluster (tests/support/slurm_cluster.sh): jobs go in through
// `hlm submit`, ranks run on both namespaced hosts and all-reduce over Gloo between them.
// Every comparison is against the same training run with two ranks on one host.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "support/python_torch.h"
#include "support/slurm_cluster.h"

namespace {

using hlm::test::rank0_result;
using hlm::test::read_text;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;
using hlm::test::SlurmCluster;
using hlm::test::submitted;

namespace fs = std::filesystem;

// The small pretraining fixture, 2 nodes x 1 rank, Gloo over the nodes' hlm0 interface.
const std::string kSmall =
    "tests/fixtures/train_small.yaml runner.nodes=2 pretrain.steps=2000 "
    "pretrain.checkpoint_every=100 pretrain.backend.interface=hlm0";
// The same training on two ranks of one host (Gloo over loopback).
const std::string kSmallLocal =
    "run tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=2000 "
    "pretrain.checkpoint_every=100";

// Waits until rank 0's log shows training at `step` or later.
bool wait_for_step(const fs::path& log, int step, int seconds = 120) {
  static const std::regex line(R"(step ([0-9]+)/)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = read_text(log);
    int last = -1;
    for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it)
      last = std::stoi((*it)[1].str());
    if (last >= step) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

// The pid of the `hlm rank` process of SLURM task `task` whose job file lies under run_dir.
int rank_pid(const fs::path& run_dir, int task) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string cmdline = read_text(entry.path() / "cmdline");
    if (cmdline.find("rank") == std::string::npos ||
        cmdline.find(run_dir.string()) == std::string::npos)
      continue;
    std::string environ = read_text(entry.path() / "environ");
    const std::string wanted = "SLURM_PROCID=" + std::to_string(task);
    for (size_t at = 0; at < environ.size(); at = environ.find('\0', at) + 1) {
      if (environ.compare(at, wanted.size() + 1, wanted + '\0') == 0)
        return std::stoi(entry.path().filename().string());
      if (environ.find('\0', at) == std::string::npos) break;
    }
  }
  return -1;
}

TEST_F(SlurmCluster, TheQuickStartTrainsOnTwoNodesWithTheLossOfTwoRanksOnOneHost) {
  ScratchDir runs("hlm_cluster_quickstart");
  const std::string shared = "workflows/quickstart.yaml vars.steps=30 scale.steps=10 ";
  const auto r = on('A', hlm() + " submit " + shared +
                             "runner.nodes=2 pretrain.backend.interface=hlm0 "
                             "settings.metrics_bind=0.0.0.0 --runs-dir " +
                             (runs.path / "cluster").string());
  const auto [id, run_dir] = submitted(r.output);
  ASSERT_FALSE(id.empty()) << r.output;
  ASSERT_EQ(wait_for_end(id), "COMPLETED") << read_text(run_dir / ("slurm-" + id + ".out"));

  // The ranks ran on the two hosts, each reaching rank 0's store on nodeA's address.
  EXPECT_NE(read_text(run_dir / "pretrain/rank0.log").find("rank 0 of 2 on nodeA (192.0.2.1)"),
            std::string::npos);
  EXPECT_NE(read_text(run_dir / "pretrain/rank1.log").find("rank 1 of 2 on nodeB (192.0.2.2)"),
            std::string::npos);
  // Each rank served its metrics on every interface, published at its node's address.
  EXPECT_TRUE(std::regex_search(read_text(run_dir / "pretrain/rank1.log"),
                                std::regex(R"(metrics: http://192\.0\.2\.2:[0-9]+/metrics)")));
  const auto status = on('A', hlm() + " status " + run_dir.string());  // scontrol reaches nodeA
  EXPECT_NE(status.output.find("job    " + id + ": COMPLETED"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("pretrain: done, step 30 of 30"), std::string::npos)
      << status.output;

  const auto local =
      run_hlm("run " + shared + "--nproc 2 --runs-dir " + (runs.path / "local").string());
  ASSERT_EQ(local.exit_code, 0) << local.output;
  const auto one_host = rank0_result(hlm::test::run_dir_of(local.output) / "pretrain");
  const auto two_nodes = rank0_result(run_dir / "pretrain");
  EXPECT_EQ(two_nodes["world_size"], 2);
  EXPECT_EQ(two_nodes["losses"], one_host["losses"]);
}

TEST_F(SlurmCluster, AJobStoppedByUsr1CheckpointsRequeuesAndEndsAsAnUninterruptedRun) {
  ScratchDir runs("hlm_cluster_requeue");
  const auto r = on('A', hlm() + " submit " + kSmall + " --runs-dir " + runs.path.string());
  const auto [id, run_dir] = submitted(r.output);
  ASSERT_FALSE(id.empty()) << r.output;
  ASSERT_TRUE(wait_for_step(run_dir / "pretrain/rank0.log", 150)) << read_text(run_dir / "hlm.log");
  const auto signalled = on('A', "scancel --signal=USR1 " + id);
  ASSERT_EQ(signalled.exit_code, 0) << signalled.output;
  ASSERT_EQ(wait_for_end(id), "COMPLETED") << read_text(run_dir / ("slurm-" + id + ".out"));

  const std::string out = read_text(run_dir / ("slurm-" + id + ".out"));
  EXPECT_NE(out.find("requeueing job " + id), std::string::npos) << out;
  EXPECT_NE(out.find("start 1 on"), std::string::npos) << out;  // SLURM_RESTART_COUNT=1
  EXPECT_NE(read_text(run_dir / "pretrain/rank0.log").find("resumed from"), std::string::npos);
  EXPECT_EQ(job(id)["Restarts"], "1");

  const auto whole = run_hlm(kSmallLocal + " --runs-dir " + (runs.path / "local").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const fs::path reference = hlm::test::run_dir_of(whole.output) / "pretrain";
  EXPECT_EQ(rank0_result(run_dir / "pretrain")["steps"], 2000);
  EXPECT_EQ(rank0_result(run_dir / "pretrain")["losses"], rank0_result(reference)["losses"]);
  EXPECT_EQ(read_text(run_dir / "pretrain/model.pt"), read_text(reference / "model.pt"));
}

// Submitted by `hlm run` of a workflow whose runner is slurm, as `hlm submit` does.
TEST_F(SlurmCluster, ARankKilledOnOneNodeIsNamedAndTheRanksResumeFromTheNewestCheckpoint) {
  ScratchDir runs("hlm_cluster_kill");
  const auto r =
      on('A', hlm() + " run " + kSmall + " runner.kind=slurm --runs-dir " + runs.path.string());
  const auto [id, run_dir] = submitted(r.output);
  ASSERT_FALSE(id.empty()) << r.output;
  ASSERT_TRUE(wait_for_step(run_dir / "pretrain/rank0.log", 250)) << read_text(run_dir / "hlm.log");
  const int pid = rank_pid(run_dir, 1);
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGKILL);
  ASSERT_EQ(wait_for_end(id), "COMPLETED") << read_text(run_dir / ("slurm-" + id + ".out"));

  const std::string log = read_text(run_dir / "hlm.log");
  EXPECT_NE(log.find("rank 1 on nodeB: Killed"), std::string::npos) << log;
  EXPECT_NE(log.find("restarting the ranks from the newest checkpoint"), std::string::npos) << log;
  EXPECT_NE(read_text(run_dir / "pretrain/rank0.log").find("resumed from"), std::string::npos);

  const auto whole = run_hlm(kSmallLocal + " --runs-dir " + (runs.path / "local").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const fs::path reference = hlm::test::run_dir_of(whole.output) / "pretrain";
  EXPECT_EQ(rank0_result(run_dir / "pretrain")["losses"], rank0_result(reference)["losses"]);
  EXPECT_EQ(read_text(run_dir / "pretrain/model.pt"), read_text(reference / "model.pt"));
}

// A rank on the other node, stopped with SIGSTOP: the job's `hlm run` on nodeA sees it through
// the heartbeat copy rank 1 keeps in the (shared) stage folder, and names it.
TEST_F(SlurmCluster, ARankStoppedOnTheOtherNodeIsNamedAsStalled) {
  ScratchDir runs("hlm_cluster_stall");
  const auto r = on('A', hlm() + " submit " + kSmall + " settings.stall_seconds=3 --runs-dir " +
                             runs.path.string());
  const auto [id, run_dir] = submitted(r.output);
  ASSERT_FALSE(id.empty()) << r.output;
  ASSERT_TRUE(wait_for_step(run_dir / "pretrain/rank0.log", 150)) << read_text(run_dir / "hlm.log");
  const int pid = rank_pid(run_dir, 1);
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGSTOP);
  const auto stopped_at = std::chrono::steady_clock::now();
  double seen_after = -1;
  while (std::chrono::steady_clock::now() - stopped_at < std::chrono::seconds(30)) {
    if (read_text(run_dir / "hlm.log").find("rank 1 made no step") != std::string::npos) {
      seen_after =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGCONT);
  ASSERT_EQ(wait_for_end(id), "COMPLETED") << read_text(run_dir / ("slurm-" + id + ".out"));
  ASSERT_GT(seen_after, 0) << read_text(run_dir / "hlm.log");
  // stall_seconds, the copy interval (0.3 s), the watcher's half second and a margin.
  EXPECT_LT(seen_after, 3 + 2.0);
  const std::string log = read_text(run_dir / "hlm.log");
  EXPECT_NE(log.find("rank 1 steps again"), std::string::npos) << log;
  const auto manifest =
      nlohmann::json::parse(read_text(run_dir / "pretrain/manifest.json"))["results"];
  ASSERT_TRUE(manifest.contains("stalled_ranks")) << manifest.dump().substr(0, 400);
  EXPECT_NE(std::find(manifest["stalled_ranks"].begin(), manifest["stalled_ranks"].end(), 1),
            manifest["stalled_ranks"].end());
}

// The scaling study's nodes axis: in a 2-node allocation, the 2-rank point runs once on one
// node and once spread over both, each measured against the same 1-rank run.
TEST_F(SlurmCluster, AScalingStudySpreadsAPointOverTheNodesItNames) {
  ScratchDir runs("hlm_cluster_scale_nodes");
  const auto r = on('A', hlm() +
                             " submit tests/fixtures/scale_small.yaml runner.nodes=2 "
                             "runner.ntasks_per_node=2 "
                             "'scale.grid={nodes: [1, 2]}' scale.repeats=1 "
                             "'scale.backend={plugin: gloo, interface: hlm0}' --runs-dir " +
                             runs.path.string());
  const auto [id, run_dir] = submitted(r.output);
  ASSERT_FALSE(id.empty()) << r.output;
  ASSERT_EQ(wait_for_end(id), "COMPLETED")
      << read_text(run_dir / ("slurm-" + id + ".out"))
      << read_text(run_dir / "scale/points/w2-nodes1/rep0/srun.log")
      << read_text(run_dir / "scale/points/w2-nodes2/rep0/srun.log");
  const auto results = nlohmann::json::parse(read_text(run_dir / "scale/manifest.json"))["results"];
  const auto& rows = results["rows"];
  ASSERT_EQ(rows.size(), 3u) << results.dump(2).substr(0, 2000);
  EXPECT_EQ(rows[0]["label"], "1 rank, nodes=1");
  EXPECT_EQ(rows[1]["label"], "2 ranks, nodes=1");
  EXPECT_EQ(rows[2]["label"], "2 ranks, nodes=2");
  EXPECT_EQ(rows[2]["baseline"], "1 rank, nodes=1");
  EXPECT_GT(rows[2]["speedup"].get<double>(), 0);
  const fs::path points = run_dir / "scale/points";
  EXPECT_NE(read_text(points / "w2-nodes1/rep0/rank1.log").find("rank 1 of 2 on nodeA"),
            std::string::npos);
  EXPECT_NE(read_text(points / "w2-nodes2/rep0/rank1.log").find("rank 1 of 2 on nodeB"),
            std::string::npos);
  // Each point's fabric was measured where its ranks ran: loopback on one node, hlm0 across.
  EXPECT_GT(rows[2]["fabric"]["bandwidth_bytes_per_s"].get<double>(), 0);
}

// torchrun's own static rendezvous across the two hosts (no SLURM involved): each node runs
// `torchrun --no_python --nnodes=2 ... hlm rank JOB` on the job file hlm wrote.
TEST_F(SlurmCluster, TorchrunAcrossTwoHostsTrainsWithTheLossOfTheMultiprocRunner) {
  ScratchDir runs("hlm_cluster_torchrun");
  const std::string args = "tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=60 ";
  const auto written = on('A', hlm() + " run " + args +
                                   "pretrain.backend.interface=hlm0 --launcher job-file "
                                   "--runs-dir " +
                                   (runs.path / "torchrun").string());
  ASSERT_EQ(written.exit_code, 0) << written.output;
  const std::smatch job = [&] {
    std::smatch m;
    std::regex_search(written.output, m, std::regex(R"(wrote (\S+/job\.json))"));
    return m;
  }();
  ASSERT_FALSE(job.empty()) << written.output;
  const std::string torchrun = hlm::test::torchrun_path() +
                               " --redirects=1 --tee=1 --no_python --nnodes=2 --nproc_per_node=1 "
                               "--master_addr=192.0.2.1 "
                               "--master_port=29611 --node_rank=";
  const std::string tail = " " + hlm() + " rank " + job[1].str() + " > ";
  const auto both = hlm::test::run_command(
      "bash " + script() + " in " + dir.string() + " " + name + " B " + torchrun + "1" + tail +
      (dir / "torchrun_b.log").string() + " 2>&1 & " + "bash " + script() + " in " + dir.string() +
      " " + name + " A " + torchrun + "0" + tail + (dir / "torchrun_a.log").string() +
      " 2>&1; a=$?; wait $!; b=$?; echo \"exit $a $b\"");
  ASSERT_NE(both.output.find("exit 0 0"), std::string::npos)
      << both.output << read_text(dir / "torchrun_a.log") << read_text(dir / "torchrun_b.log");

  const fs::path stage = fs::path(job[1].str()).parent_path();
  const auto resumed = run_hlm("run --resume " + stage.parent_path().string() + " --runs-dir " +
                               (runs.path / "torchrun").string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("the ranks already finished this job"), std::string::npos);

  const auto local = run_hlm("run " + args + "--runs-dir " + (runs.path / "local").string());
  ASSERT_EQ(local.exit_code, 0) << local.output;
  EXPECT_EQ(rank0_result(stage)["losses"],
            rank0_result(hlm::test::run_dir_of(local.output) / "pretrain")["losses"]);
}

}  // namespace
