// The dashboard, proven against a real Prometheus (Debian package `prometheus`) started by
// tools/monitoring/serve.sh with tools/monitoring's config: a 2-rank pretraining runs while
// Prometheus scrapes every rank through the run's target files, then every PromQL expression of
// every panel, read from the dashboard JSON (so a new panel is tested without a change here), must
// return data for that run over the time it ran.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "metrics/energy.h"
#include "metrics/metrics.h"
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

// Why an expression cannot return data on this host ("" when it can): GPU series need NVML,
// energy series a readable energy source. These are the only expressions a run may leave empty.
std::string needs_missing_source(const std::string& expr) {
  hlm::EnergySources& sources = hlm::energy_sources();
  if (expr.find("hlm_gpu_") != std::string::npos && !sources.nvml().available())
    return "needs a GPU (" + sources.nvml().unavailable_reason() + ")";
  if (expr.find("hlm_cpu_energy") != std::string::npos && !sources.rapl().available())
    return "needs RAPL (" + sources.rapl().unavailable_reason() + ")";
  if (expr.find("hlm_train_energy") != std::string::npos && !sources.any())
    return "needs an energy source (" + sources.describe() + ")";
  return "";
}

}  // namespace

TEST(MonitoringDashboard, EveryPanelQueryReturnsDataForATwoRankRun) {
  if (!fs::exists(kPrometheus)) GTEST_SKIP() << kPrometheus << " missing (apt install prometheus)";
  hlm::test::ScratchDir dir("hlm_dashboard");
  const fs::path runs = dir.path / "runs";
  fs::create_directories(runs / "targets");

  // tools/monitoring/serve.sh as a user starts it, with the shipped config scraping every second.
  const int web_port = hlm::test::free_port();
  hlm::test::Child server({"/bin/bash", std::string(HLM_SOURCE_DIR) + "/tools/monitoring/serve.sh",
                           "--runs", runs.string(), "--port", std::to_string(web_port),
                           "--interval", "1", "--data", (dir.path / "data").string()},
                          (dir.path / "prometheus.log").string());
  for (int i = 0;
       i < 120 && hlm::test::http_get(web_port, "/-/ready").find("Ready") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  ASSERT_TRUE(server.running()) << hlm::test::read_text(dir.path / "prometheus.log");

  const double start = unix_now();
  const auto r =
      hlm::test::run_hlm("run tests/fixtures/monitor_two_ranks.yaml --runs-dir " + runs.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(hlm::test::read_text(dir.path / "prometheus.log").find("Prometheus: http://127.0.0.1:"),
            std::string::npos);
  // Said once, by the run: its ranks, on the same node, stay quiet about it.
  const std::string energy_line = "energy: no energy source readable";
  if (r.output.find("energy: ") != std::string::npos &&
      r.output.find(energy_line) != std::string::npos) {
    EXPECT_EQ(r.output.find(energy_line), r.output.rfind(energy_line)) << r.output;
    EXPECT_NE(hlm::test::read_text(hlm::test::run_dir_of(r.output) / "report.md")
                  .find("Energy: no energy source readable"),
              std::string::npos);
  }
  const double end = unix_now() + 2;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string run = hlm::test::run_dir_of(r.output).filename().string();

  // Both ranks' endpoints were scraped.
  std::set<std::string> ranks;
  for (const auto& series : range_query(
           web_port, "hlm_train_steps_total{run=\"" + run + "\",stage=\"pretrain\"}", start, end)) {
    ranks.insert(series["metric"].value("rank", ""));
    EXPECT_EQ(series["metric"].value("node", ""), hlm::node_name()) << series.dump();
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"}));

  std::ifstream in(std::string(HLM_SOURCE_DIR) + "/tools/monitoring/grafana/dashboards/hlm.json");
  const nlohmann::json dashboard = nlohmann::json::parse(in);
  size_t checked = 0, skipped = 0;
  for (const auto& panel : dashboard.at("panels"))
    for (const auto& target : panel.value("targets", nlohmann::json::array())) {
      std::string expr = target.value("expr", "");
      if (expr.empty()) continue;
      // Grafana's variables as a user picks this run and all ranks.
      for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
               {"$run", run}, {"$rank", ".*"}, {"$node", ".*"}, {"$__rate_interval", "10s"}})
        for (size_t at; (at = expr.find(from)) != std::string::npos;)
          expr.replace(at, from.size(), to);
      if (const std::string why = needs_missing_source(expr); !why.empty()) {
        std::cout << "skipped panel \"" << panel.value("title", "") << "\": " << why << "\n";
        ++skipped;
        continue;
      }
      ++checked;
      EXPECT_FALSE(range_query(web_port, expr, start, end).empty())
          << "panel \"" << panel.value("title", "") << "\" shows nothing for run " << run << ": "
          << expr;
    }
  EXPECT_GE(checked, 24u);
  if (!hlm::energy_sources().any()) {
    EXPECT_GE(skipped, 4u);
  }
}
