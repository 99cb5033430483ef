// Metrics against the real Prometheus server and promtool (Debian package `prometheus`):
// the exposer is scraped through a file_sd target file, and tools/monitoring stays valid.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "metrics/metrics.h"
#include "support/child_process.h"
#include "support/http_get.h"

namespace fs = std::filesystem;

using hlm::test::Child;

namespace {

const char* kPrometheus = "/usr/bin/prometheus";
const char* kPromtool = "/usr/bin/promtool";

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Polls the query API until the instant query returns a series or the deadline passes.
nlohmann::json wait_for_series(int port, const std::string& query, Child& server, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline && server.running()) {
    const std::string body = hlm::test::http_get(port, "/api/v1/query?query=" + query);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("status", "") == "success" && !j["data"]["result"].empty())
      return j["data"]["result"];
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return nlohmann::json::array();
}

}  // namespace

TEST(MetricsPrometheus, RealServerScrapesHlmMetrics) {
  if (!fs::exists(kPrometheus)) GTEST_SKIP() << kPrometheus << " missing (apt install prometheus)";
  const fs::path dir = fs::temp_directory_path() / ("hlm_prometheus_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);

  hlm::Metrics m;
  m.set_labels("run-p", 0);
  const int exposer_port = m.start_exposer(0);
  hlm::TrainStep s;
  s.loss = 3.5;
  s.rank_tokens = 512;
  s.step_seconds = 0.1;
  m.train_step("pretrain", s);
  hlm::write_file_sd((dir / "targets" / "run-p-rank0.json").string(),
                     {"127.0.0.1:" + std::to_string(exposer_port)}, {{"workflow", "test"}});
  std::ofstream(dir / "prometheus.yml")
      << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
         "scrape_configs:\n"
         "  - job_name: hlm\n"
         "    honor_labels: true\n"
         "    file_sd_configs:\n"
         "      - files: ['"
      << (dir / "targets").string() << "/*.json']\n"
      << "        refresh_interval: 1s\n";
  const int web_port = hlm::test::free_port();
  Child server({kPrometheus, "--config.file=" + (dir / "prometheus.yml").string(),
                "--web.listen-address=127.0.0.1:" + std::to_string(web_port),
                "--storage.tsdb.path=" + (dir / "data").string(), "--log.level=warn"},
               (dir / "prometheus.log").string());

  const nlohmann::json build = wait_for_series(web_port, "hlm_build_info", server, 30.0);
  ASSERT_FALSE(build.empty()) << "no hlm_build_info within 30 s; prometheus log:\n"
                              << read_text(dir / "prometheus.log");
  EXPECT_EQ(build[0]["metric"]["version"], HLM_VERSION);
  EXPECT_EQ(build[0]["metric"]["workflow"], "test");  // the file_sd target label
  EXPECT_EQ(build[0]["value"][1], "1");
  const nlohmann::json loss = wait_for_series(web_port, "hlm_train_loss", server, 10.0);
  ASSERT_FALSE(loss.empty());
  EXPECT_EQ(loss[0]["metric"]["stage"], "pretrain");
  EXPECT_EQ(loss[0]["metric"]["run"], "run-p");
  EXPECT_EQ(loss[0]["metric"]["rank"], "0");
  EXPECT_EQ(loss[0]["value"][1], "3.5");
  server.stop();
  fs::remove_all(dir);
}

TEST(MetricsPrometheus, MonitoringConfigPassesPromtool) {
  if (!fs::exists(kPromtool)) GTEST_SKIP() << kPromtool << " missing (apt install prometheus)";
  const fs::path log = fs::temp_directory_path() / ("hlm_promtool_" + std::to_string(::getpid()));
  Child promtool({kPromtool, "check", "config",
                  std::string(HLM_SOURCE_DIR) + "/tools/monitoring/prometheus.yml"},
                 log.string());
  EXPECT_EQ(promtool.wait(), 0) << read_text(log);
  fs::remove(log);
}

TEST(MetricsMonitoring, DashboardQueriesOnlyExportedHlmMetrics) {
  std::ifstream in(std::string(HLM_SOURCE_DIR) + "/tools/monitoring/grafana/dashboards/hlm.json");
  ASSERT_TRUE(in) << "dashboard missing";
  const nlohmann::json dashboard = nlohmann::json::parse(in);
  const std::vector<std::string> exported = {"hlm_build_info",
                                             "hlm_stage_duration_seconds",
                                             "hlm_tokenize_beats_total",
                                             "hlm_train_steps_total",
                                             "hlm_train_tokens_total",
                                             "hlm_train_loss",
                                             "hlm_eval_loss",
                                             "hlm_train_learning_rate",
                                             "hlm_train_grad_norm",
                                             "hlm_train_step_duration_seconds",
                                             "hlm_data_wait_seconds_total",
                                             "hlm_allreduce_seconds_total",
                                             "hlm_train_mfu_ratio",
                                             "hlm_last_step_timestamp_seconds",
                                             "hlm_checkpoint_duration_seconds",
                                             "hlm_process_resident_memory_bytes",
                                             "hlm_train_phase_seconds_total",
                                             "hlm_train_samples_total",
                                             "hlm_process_cpu_seconds_total",
                                             "hlm_checkpoint_age_seconds",
                                             "hlm_train_stalled",
                                             "hlm_stage_status",
                                             "hlm_train_energy_joules_per_sample",
                                             "hlm_cpu_energy_joules_total",
                                             "hlm_gpu_energy_joules_total",
                                             "hlm_gpu_power_watts",
                                             "hlm_gpu_memory_used_bytes",
                                             "hlm_gpu_utilization_ratio"};
  size_t queries = 0;
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel.value("targets", nlohmann::json::array())) {
      const std::string expr = target.value("expr", "");
      ++queries;
      // Every hlm_ name in a query must be one we export (a histogram adds _bucket/_sum/_count).
      for (size_t at = expr.find("hlm_"); at != std::string::npos; at = expr.find("hlm_", at + 1)) {
        size_t end = at;
        while (end < expr.size() &&
               (std::isalnum(static_cast<unsigned char>(expr[end])) || expr[end] == '_'))
          ++end;
        std::string name = expr.substr(at, end - at);
        for (const char* suffix : {"_bucket", "_sum", "_count"})
          if (name == std::string("hlm_train_step_duration_seconds") + suffix)
            name = "hlm_train_step_duration_seconds";
        EXPECT_NE(std::find(exported.begin(), exported.end(), name), exported.end())
            << panel.value("title", "") << ": " << name;
        at = end;
      }
    }
  }
  EXPECT_GE(queries, 7u);
}
