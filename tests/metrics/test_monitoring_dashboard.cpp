// The dashboard, proven against a real Prometheus (Debian package `prometheus`) started with
// tools/monitoring's config: a 2-rank pretraining runs while Prometheus scrapes every rank
// through the run's target files, then every PromQL expression of every panel, read from the
// dashboard JSON (so a new panel is tested without a change here), must return data for that
// run over the time it ran.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "support/child_process.h"
#include "support/hlm_cli.h"
#include "support/http_get.h"

namespace fs = std::filesystem;

namespace {

const char* kPrometheus = "/usr/bin/prometheus";

std::string url_encoded(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "tools/monitoring/prometheus.yml no longer has " << from;
  text.replace(at, from.size(), to);
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The series a range query returns over [start, end] at one-second steps.
nlohmann::json range_query(int port, const std::string& query, double start, double end) {
  const std::string body = hlm::test::http_get(
      port, "/api/v1/query_range?query=" + url_encoded(query) + "&start=" + std::to_string(start) +
                "&end=" + std::to_string(end) + "&step=1");
  const auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("status", "") != "success") return nlohmann::json::array();
  return j["data"]["result"];
}

}  // namespace

TEST(MonitoringDashboard, EveryPanelQueryReturnsDataForATwoRankRun) {
  if (!fs::exists(kPrometheus)) GTEST_SKIP() << kPrometheus << " missing (apt install prometheus)";
  hlm::test::ScratchDir dir("hlm_dashboard");
  const fs::path runs = dir.path / "runs";
  fs::create_directories(runs / "targets");

  // tools/monitoring's config as shipped, scraping every second and reading this test's runs.
  std::ifstream shipped(std::string(HLM_SOURCE_DIR) + "/tools/monitoring/prometheus.yml");
  std::string config((std::istreambuf_iterator<char>(shipped)), {});
  replace_once(config, "scrape_interval: 5s", "scrape_interval: 1s");
  replace_once(config, "evaluation_interval: 5s", "evaluation_interval: 1s");
  replace_once(config, "refresh_interval: 10s", "refresh_interval: 1s");
  replace_once(config, "../../runs/targets/*.json", (runs / "targets").string() + "/*.json");
  std::ofstream(dir.path / "prometheus.yml") << config;
  const int web_port = hlm::test::free_port();
  hlm::test::Child server(
      {kPrometheus, "--config.file=" + (dir.path / "prometheus.yml").string(),
       "--web.listen-address=127.0.0.1:" + std::to_string(web_port),
       "--storage.tsdb.path=" + (dir.path / "data").string(), "--log.level=warn"},
      (dir.path / "prometheus.log").string());
  for (int i = 0;
       i < 120 && hlm::test::http_get(web_port, "/-/ready").find("Ready") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  ASSERT_TRUE(server.running()) << hlm::test::read_text(dir.path / "prometheus.log");

  const double start = unix_now();
  const auto r =
      hlm::test::run_hlm("run tests/fixtures/monitor_two_ranks.yaml --runs-dir " + runs.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double end = unix_now() + 2;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string run = hlm::test::run_dir_of(r.output).filename().string();

  // Both ranks' endpoints were scraped.
  std::set<std::string> ranks;
  for (const auto& series : range_query(
           web_port, "hlm_train_steps_total{run=\"" + run + "\",stage=\"pretrain\"}", start, end))
    ranks.insert(series["metric"].value("rank", ""));
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"}));

  std::ifstream in(std::string(HLM_SOURCE_DIR) + "/tools/monitoring/grafana/dashboards/hlm.json");
  const nlohmann::json dashboard = nlohmann::json::parse(in);
  size_t checked = 0;
  for (const auto& panel : dashboard.at("panels"))
    for (const auto& target : panel.value("targets", nlohmann::json::array())) {
      std::string expr = target.value("expr", "");
      if (expr.empty()) continue;
      // Grafana's variables as a user picks this run and all ranks.
      for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
               {"$run", run}, {"$rank", ".*"}, {"$__rate_interval", "10s"}})
        for (size_t at; (at = expr.find(from)) != std::string::npos;)
          expr.replace(at, from.size(), to);
      ++checked;
      EXPECT_FALSE(range_query(web_port, expr, start, end).empty())
          << "panel \"" << panel.value("title", "") << "\" shows nothing for run " << run << ": "
          << expr;
    }
  EXPECT_GE(checked, 20u);
}
