// A rank that never arrives is named, never waited on forever: rank 0 started alone gives up
// after settings.rendezvous_timeout_seconds naming the missing rank and the endpoint, and a
// rank whose rank 0 never starts names the endpoint it could not reach.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "support/hlm_cli.h"
#include "support/http_get.h"

namespace {

struct Timed {
  hlm::test::CommandResult result;
  double seconds;
};

// `hlm rank JOB` as one rank of 2, started alone, with the job's 3 s rendezvous timeout.
Timed start_rank_alone(const std::string& job, int rank, int port, const std::string& env = "") {
  const auto start = std::chrono::steady_clock::now();
  const auto r = hlm::test::run_command(
      "cd '" HLM_SOURCE_DIR "' && " + env + " RANK=" + std::to_string(rank) +
      " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
      " '" HLM_BINARY_DIR "/bin/hlm' rank " + job + " 2>&1");
  return {r, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

struct JobFile {
  std::string path;    // "" when hlm failed or named no job file
  std::string output;  // hlm's
};

// The job file of a 2-rank pretraining with a 3 s rendezvous timeout, written for another
// launcher (--launcher job-file).
JobFile write_two_rank_job(const std::filesystem::path& runs) {
  const auto written = hlm::test::run_hlm(
      "run tests/fixtures/train_small.yaml vars.world_size=2 settings.rendezvous_timeout_seconds=3 "
      "--launcher job-file --runs-dir " +
      runs.string());
  std::smatch job;
  if (written.exit_code != 0 ||
      !std::regex_search(written.output, job, std::regex(R"(wrote (\S+/job\.json))")))
    return {"", written.output};
  return {job[1].str(), written.output};
}

TEST(RendezvousTimeout, ARankThatNeverArrivesIsNamedAfterTheTimeout) {
  hlm::test::ScratchDir runs("hlm_rendezvous");
  const JobFile job = write_two_rank_job(runs.path);
  ASSERT_FALSE(job.path.empty()) << job.output;

  const int port = hlm::test::free_port();
  const Timed alone0 = start_rank_alone(job.path, 0, port);
  EXPECT_NE(alone0.result.exit_code, 0);
  EXPECT_NE(alone0.result.output.find("rendezvous at 127.0.0.1:" + std::to_string(port) +
                                      ": rank 1 of 2 never arrived within 3 s"),
            std::string::npos)
      << alone0.result.output;
  EXPECT_LT(alone0.seconds, 30);

  const Timed alone1 = start_rank_alone(job.path, 1, hlm::test::free_port());
  EXPECT_NE(alone1.result.exit_code, 0);
  EXPECT_NE(alone1.result.output.find("rank 1 could not reach the rendezvous endpoint 127.0.0.1:"),
            std::string::npos)
      << alone1.result.output;
  EXPECT_LT(alone1.seconds, 30);
}

// A shared token (HLM_RENDEZVOUS_TOKEN) keeps a process without it out of the group: rank 0
// with one token and a rank 1 with another meet at the same store, and rank 0 still reports
// rank 1 as never arrived. Ranks with the same token train.
TEST(RendezvousTimeout, ARankWithoutTheSharedTokenCannotJoin) {
  hlm::test::ScratchDir runs("hlm_rendezvous_token");
  const JobFile job = write_two_rank_job(runs.path);
  ASSERT_FALSE(job.path.empty()) << job.output;
  const int port = hlm::test::free_port();
  Timed stray;
  std::thread stranger([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // after rank 0 serves
    stray = start_rank_alone(job.path, 1, port, "HLM_RENDEZVOUS_TOKEN=guessed");
  });
  const Timed owner = start_rank_alone(job.path, 0, port, "HLM_RENDEZVOUS_TOKEN=s3cret");
  stranger.join();
  EXPECT_NE(owner.result.exit_code, 0);
  EXPECT_NE(owner.result.output.find("rank 1 of 2 never arrived"), std::string::npos)
      << owner.result.output;
  EXPECT_NE(stray.result.exit_code, 0) << stray.result.output;

  const auto together = hlm::test::run_command(
      "cd '" HLM_SOURCE_DIR "' && HLM_RENDEZVOUS_TOKEN=s3cret '" HLM_BINARY_DIR
      "/bin/hlm' run tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=20 "
      "--runs-dir " +
      (runs.path / "together").string() + " 2>&1");
  EXPECT_EQ(together.exit_code, 0) << together.output;
}

}  // namespace
