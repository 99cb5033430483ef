// The metrics exposer in a process that links LibTorch, like the hlm binary: prometheus-cpp's
// civetweb Exposer failed there ("null context when constructing CivetServer") with 1.13.
#include <gtest/gtest.h>

#include <string>

#include "metrics/metrics.h"
#include "support/http_get.h"

TEST(MetricsExposerWithTorch, ServesMetricsInAProcessLinkingLibTorch) {
  const int port = hlm::metrics().start_exposer(0);
  ASSERT_GT(port, 0);
  EXPECT_EQ(hlm::metrics().exposer_port(), port);
  const std::string body = hlm::test::http_get(port, "/metrics");
  EXPECT_NE(body.find("hlm_build_info{"), std::string::npos) << body;
}
