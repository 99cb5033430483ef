// `curl 127.0.0.1:PORT/metrics` during a run: the port hlm prints at start serves the hlm_
// series while training is under way; with 2 ranks each rank serves its own, found through
// the run's Prometheus target files, which go when the run ends, and `promtool check metrics`
// finds nothing in it; /healthz answers during a long step.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "support/hlm_cli.h"
#include "support/http_get.h"

namespace {

// Addresses listening on a TCP port, from /proc/net/tcp and tcp6 (hex, as the kernel writes
// them: 0100007F is 127.0.0.1, 00000000 is every address).
std::vector<std::string> listening_addresses(int port) {
  std::vector<std::string> found;
  char port_hex[8];
  std::snprintf(port_hex, sizeof(port_hex), "%04X", port);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state == "0A" && local.substr(local.find(':') + 1) == port_hex)
        found.push_back(local.substr(0, local.find(':')));
    }
  }
  return found;
}

// 2000 logged steps are far more output than a pipe holds, so hlm cannot finish (and close its
// metrics port) before this test has read the line it scrapes on. Without metrics_bind in
// the workflow the port listens on 127.0.0.1 only.
TEST(MetricsDuringRun, ThePrintedPortServesTrainingMetricsWhileTheRunIsGoing) {
  hlm::test::ScratchDir runs("hlm_live_metrics");
  int port = 0;
  std::string scraped;
  std::vector<std::string> listening;
  const auto r = hlm::test::run_hlm_watching(
      "run tests/fixtures/train_small.yaml pretrain.steps=2000 --runs-dir " + runs.path.string(),
      [&](pid_t, const std::string& line) {
        const std::string marker = "metrics: http://127.0.0.1:";
        if (const size_t at = line.find(marker); at != std::string::npos)
          port = std::stoi(line.substr(at + marker.size()));
        if (scraped.empty() && port > 0 && line.find("step 100/") != std::string::npos) {
          scraped = hlm::test::http_get(port, "/metrics");
          listening = listening_addresses(port);
        }
      });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_GT(port, 0) << r.output;
  EXPECT_EQ(listening, std::vector<std::string>{"0100007F"});
  for (const char* series :
       {"hlm_build_info{", "hlm_train_loss{", "hlm_train_steps_total{", "hlm_tokenize_beats_total{",
        "hlm_stage_duration_seconds{", "hlm_train_step_duration_seconds_bucket{",
        "hlm_process_resident_memory_bytes"})
    EXPECT_NE(scraped.find(series), std::string::npos) << series << "\n" << scraped;
}

// /healthz is answered by the server's own threads: while a training step of several seconds
// runs (a wider model and a larger batch than the fixture's), each answer comes within 100 ms.
TEST(MetricsDuringRun, HealthzAnswersWithinATenthOfASecondWhileALongStepRuns) {
  hlm::test::ScratchDir runs("hlm_healthz");
  int port = 0;
  std::vector<double> answer_ms;
  std::vector<std::string> answers;
  const auto r = hlm::test::run_hlm_watching(
      "run tests/fixtures/train_small.yaml pretrain.steps=3 pretrain.batch=128 "
      "pretrain.checkpoint_every=0 'pretrain.model={plugin: gpt, vocab_size: 20, context: 32, "
      "d_model: 512, n_layer: 4, n_head: 8, d_ff: 2048}' --runs-dir " +
          runs.path.string(),
      [&](pid_t, const std::string& line) {
        const std::string marker = "metrics: http://127.0.0.1:";
        if (const size_t at = line.find(marker); at != std::string::npos)
          port = std::stoi(line.substr(at + marker.size()));
        if (!answers.empty() || port == 0 || line.find("step 1/3") == std::string::npos) return;
        for (int i = 0; i < 10; ++i) {  // during step 2
          const auto start = std::chrono::steady_clock::now();
          answers.push_back(hlm::test::http_get(port, "/healthz"));
          answer_ms.push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(answers.size(), 10u) << r.output;
  for (size_t i = 0; i < answers.size(); ++i) {
    EXPECT_EQ(answers[i], "ok\n");
    EXPECT_LT(answer_ms[i], 100.0) << "answer " << i;
  }
}

// Every target file under dir: its labels and port.
std::vector<std::pair<nlohmann::json, int>> published_targets(const std::filesystem::path& dir) {
  std::vector<std::pair<nlohmann::json, int>> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto doc = nlohmann::json::parse(in);
    const std::string target = doc.at(0).at("targets").at(0);
    out.emplace_back(doc.at(0).at("labels"), std::stoi(target.substr(target.rfind(':') + 1)));
  }
  return out;
}

TEST(MetricsDuringRun, EachRankOfATwoRankRunServesItsOwnSeriesThroughTheRunsTargets) {
  hlm::test::ScratchDir runs("hlm_rank_metrics");
  const auto targets_dir = runs.path / "targets";
  std::map<std::string, std::string> scraped;  // rank label -> its /metrics
  std::string run_label;
  const auto r = hlm::test::run_hlm_watching(
      "run tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=2000 --runs-dir " +
          runs.path.string(),
      [&](pid_t, const std::string& line) {
        if (!scraped.empty() || line.find("step 100/") == std::string::npos) return;
        for (const auto& [labels, port] : published_targets(targets_dir)) {
          if (!labels.contains("stage")) {  // the run's own target (hlm run)
            run_label = labels.at("run");
            continue;
          }
          scraped[labels.at("rank")] = hlm::test::http_get(port, "/metrics");
        }
      });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(scraped.size(), 2u) << "rank targets seen: " << scraped.size() << "\n" << r.output;
  ASSERT_FALSE(run_label.empty());
  for (const auto& [rank, body] : scraped) {
    const std::string series =
        "hlm_train_steps_total{rank=\"" + rank + "\",run=\"" + run_label + "\"";
    EXPECT_NE(body.find(series), std::string::npos) << series << "\n" << body;
    EXPECT_NE(body.find("hlm_allreduce_seconds_total{rank=\"" + rank + "\""), std::string::npos)
        << body;
    // Prometheus's own linter (names, units, _total counters, help texts) finds nothing.
    if (std::filesystem::exists("/usr/bin/promtool")) {
      const std::filesystem::path lint = runs.path / ("promtool.rank" + rank + ".txt");
      FILE* promtool =
          ::popen(("/usr/bin/promtool check metrics > " + lint.string() + " 2>&1").c_str(), "w");
      ASSERT_NE(promtool, nullptr);
      std::fwrite(body.data(), 1, body.size(), promtool);
      EXPECT_EQ(::pclose(promtool), 0) << hlm::test::read_text(lint);
      EXPECT_EQ(hlm::test::read_text(lint), "") << "rank " << rank;
    }
  }
  EXPECT_TRUE(published_targets(targets_dir).empty()) << "target files left after the run";
}

}  // namespace

// metrics.jsonl grows with the log, not with every step (before: 13 lines a step whatever
// log_every said, gigabytes for a long run of a small model).
TEST(MetricsDuringRun, MetricsJsonlFollowsLogEvery) {
  hlm::test::ScratchDir runs("hlm_jsonl_log_every");
  const auto r = hlm::test::run_hlm(
      "run tests/fixtures/train_small.yaml pretrain.steps=40 pretrain.log_every=10 "
      "pretrain.checkpoint_every=0 --runs-dir " +
      runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(hlm::test::run_dir_of(r.output) / "metrics.jsonl");
  std::vector<int64_t> steps;
  for (std::string line; std::getline(in, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record.value("name", "") == "hlm_train_loss") steps.push_back(record.value("step", 0));
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{10, 20, 30, 40}));
}
