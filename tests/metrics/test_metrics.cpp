// Metrics without a Prometheus server: the /metrics endpoint, metrics.jsonl and file_sd files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hlm/errors.h"
#include "metrics/metrics.h"
#include "support/hlm_cli.h"
#include "support/http_get.h"

namespace fs = std::filesystem;
using hlm::Metrics;
using hlm::TrainStep;

namespace {

TrainStep step(uint64_t n, double loss) {
  TrainStep s;
  s.step = n;
  s.loss = loss;
  s.learning_rate = 3e-4;
  s.grad_norm = 1.25;
  s.rank_tokens = 4096;
  s.step_seconds = 0.2;
  s.data_wait_seconds = 0.01;
  s.allreduce_seconds = 0.05;
  s.forward_seconds = 0.0625;
  s.backward_seconds = 0.125;
  s.optimizer_seconds = 0.0078125;
  s.mfu_ratio = 0.31;
  return s;
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST(Metrics, ExposerServesBuildInfoAndTrainLossOnAnEphemeralPort) {
  Metrics m;
  m.set_labels("run-a", 3);
  const int port = m.start_exposer(0);
  ASSERT_GT(port, 0);
  EXPECT_EQ(m.exposer_port(), port);
  m.train_step("pretrain", step(1, 2.75));
  m.train_step("pretrain", step(2, 2.5));
  m.tokenize_beats("tokenize", 1200);
  const std::string body = hlm::test::http_get(port, "/metrics");
  EXPECT_NE(body.find("hlm_build_info{"), std::string::npos) << body;
  EXPECT_NE(body.find("hlm_train_loss{rank=\"3\",run=\"run-a\",stage=\"pretrain\"} 2.5"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("hlm_train_steps_total{rank=\"3\",run=\"run-a\",stage=\"pretrain\"} 2"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("hlm_train_tokens_total{rank=\"3\",run=\"run-a\",stage=\"pretrain\"} 8192"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("hlm_train_step_duration_seconds_bucket{"), std::string::npos) << body;
  EXPECT_NE(body.find("hlm_train_phase_seconds_total{phase=\"backward\",rank=\"3\",run=\"run-a\","
                      "stage=\"pretrain\"} 0.25"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("hlm_tokenize_beats_total{rank=\"3\",run=\"run-a\",stage=\"tokenize\"} 1200"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("hlm_process_resident_memory_bytes{rank=\"3\",run=\"run-a\"}"),
            std::string::npos)
      << body;
}

TEST(Metrics, TakenPortIsAConfigErrorNamingTheAddress) {
  Metrics first;
  const int port = first.start_exposer(0);
  Metrics second;
  try {
    second.start_exposer(port);
    FAIL() << "second exposer bound a taken port";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << e.what();
  }
}

TEST(Metrics, WorksWithoutAnExposer) {
  Metrics m;
  EXPECT_EQ(m.exposer_port(), 0);
  m.train_step("pretrain", step(1, 1.0));
  m.stage_finished("pretrain", 12.5);
  m.checkpoint_written("pretrain", 0.4);
  m.eval_loss("evaluate", 0.9);
}

TEST(Metrics, JsonlLinesParseAsJsonWithNameValueAndLabels) {
  const fs::path dir = temp_dir("hlm_metrics_jsonl");
  const std::string path = (dir / "metrics.jsonl").string();
  Metrics m;
  m.set_labels("run-b", 0);
  m.open_jsonl(path);
  m.train_step("pretrain", step(7, 2.0));
  m.stage_finished("pretrain", 30.0);
  m.close_jsonl();
  m.train_step("pretrain", step(8, 1.0));  // after close: not logged

  std::ifstream in(path);
  std::string line;
  std::map<std::string, nlohmann::json> last;
  size_t lines = 0;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);  // throws on a bad line
    ASSERT_TRUE(j.contains("t") && j.contains("name") && j.contains("value")) << line;
    EXPECT_EQ(j["run"], "run-b");
    EXPECT_EQ(j["rank"], 0);
    EXPECT_GT(j["t"].get<double>(), 1.6e9);
    last[j["name"].get<std::string>() + j.value("phase", "")] = j;
    ++lines;
  }
  EXPECT_EQ(lines, 15u);  // 10 values per step with MFU, 3 phases, 2 at stage end
  EXPECT_EQ(last["hlm_train_loss"]["value"], 2.0);
  EXPECT_EQ(last["hlm_train_loss"]["step"], 7);
  EXPECT_EQ(last["hlm_train_loss"]["stage"], "pretrain");
  EXPECT_EQ(last["hlm_train_tokens_total"]["value"], 4096.0);
  EXPECT_EQ(last["hlm_stage_duration_seconds"]["value"], 30.0);
  EXPECT_EQ(last["hlm_train_phase_seconds_totalforward"]["value"], 0.0625);
  EXPECT_EQ(last["hlm_train_phase_seconds_totaloptimizer"]["step"], 7);
  EXPECT_GT(last["hlm_process_resident_memory_bytes"]["value"].get<double>(), 0.0);
  fs::remove_all(dir);
}

TEST(Metrics, FileSdTargetFileListsTargetsAndLabels) {
  const fs::path dir = temp_dir("hlm_metrics_sd");
  const std::string path = (dir / "targets" / "run-rank0.json").string();
  hlm::write_file_sd(path, {"127.0.0.1:9101", "127.0.0.1:9102"}, {{"workflow", "mitdb"}});
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_EQ(doc[0]["targets"][1], "127.0.0.1:9102");
  EXPECT_EQ(doc[0]["labels"]["workflow"], "mitdb");
  EXPECT_FALSE(hlm::test::temp_file_left(path));
  fs::remove_all(dir);
}

TEST(Metrics, ProcessResidentMemoryIsReadFromProc) {
  EXPECT_GT(hlm::process_resident_memory_bytes(), 1u << 20);
}

TEST(Metrics, ScrapeAddressIsTheBoundAddressOrThisHostsNameForAWildcard) {
  EXPECT_EQ(hlm::scrape_address("192.0.2.1", 9100), "192.0.2.1:9100");
  EXPECT_EQ(hlm::scrape_address("::1", 9100), "[::1]:9100");
  char name[256] = {};
  ASSERT_EQ(::gethostname(name, sizeof(name) - 1), 0);
  EXPECT_EQ(hlm::scrape_address("0.0.0.0", 9100), std::string(name) + ":9100");
}
