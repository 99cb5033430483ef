// `curl 127.0.0.1:PORT/metrics` during a run: the port hlm prints at start serves the hlm_
// series while training is under way.
#include <gtest/gtest.h>

#include "hlm_cli.h"
#include "metrics/http_get.h"

namespace {

// 2000 logged steps are far more output than a pipe holds, so hlm cannot finish (and close its
// metrics port) before this test has read the line it scrapes on.
TEST(MetricsDuringRun, ThePrintedPortServesTrainingMetricsWhileTheRunIsGoing) {
  hlm::test::ScratchDir runs("hlm_live_metrics");
  int port = 0;
  std::string scraped;
  const auto r = hlm::test::run_hlm_watching(
      "run tests/engine/fixtures/train_small.yaml pretrain.steps=2000 --runs-dir " + runs.path.string(),
      [&](pid_t, const std::string& line) {
        const std::string marker = "metrics: http://127.0.0.1:";
        if (const size_t at = line.find(marker); at != std::string::npos)
          port = std::stoi(line.substr(at + marker.size()));
        if (scraped.empty() && port > 0 && line.find("step 100/") != std::string::npos)
          scraped = hlm::test::http_get(port, "/metrics");
      });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_GT(port, 0) << r.output;
  for (const char* series : {"hlm_build_info{", "hlm_train_loss{", "hlm_train_steps_total{",
                             "hlm_tokenize_beats_total{", "hlm_stage_duration_seconds{",
                             "hlm_train_step_duration_seconds_bucket{", "hlm_process_resident_memory_bytes"})
    EXPECT_NE(scraped.find(series), std::string::npos) << series << "\n" << scraped;
}

}  // namespace
