// A scaling grid expands to every combination at every world size; what the host cannot run
// is listed with why; a bad axis is an error naming the workflow line.
#include <gtest/gtest.h>

#include "hlm/errors.h"
#include "scaling/scaling_grid.h"

namespace {

const std::vector<std::string> kAxes = {"threads", "context", "batch", "backend"};

TEST(ScalingGrid, EveryCombinationAtEveryWorldSize) {
  const auto m = hlm::expand_grid({1, 2}, {{"context", {128, 256}}, {"batch", {8, 16}}}, kAxes, 1,
                                  64, false, "w.yaml:3");
  ASSERT_EQ(m.points.size(), 8u);
  EXPECT_TRUE(m.skipped.empty());
  EXPECT_EQ(m.axes, (std::vector<std::string>{"batch", "context"}));  // JSON keeps keys sorted
  EXPECT_EQ(m.points[0].label, "1 rank, batch=8 context=128");
  EXPECT_EQ(m.points[1].label, "2 ranks, batch=8 context=128");
  EXPECT_EQ(m.points[2].config, "batch=8 context=256");
  EXPECT_EQ(m.points[7].dir, "w2-batch16-context256");
  EXPECT_EQ(m.points[7].axes["context"], 256);
}

TEST(ScalingGrid, PointsNeedingMoreCoresThanTheHostAreSkippedWithWhy) {
  const auto m = hlm::expand_grid({1, 2, 4}, {{"threads", {1, 2}}}, kAxes, 1, 2, false, "w");
  std::vector<std::string> labels;
  for (const auto& p : m.points) labels.push_back(p.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"1 rank, threads=1", "2 ranks, threads=1",
                                              "1 rank, threads=2"}));
  ASSERT_EQ(m.skipped.size(), 3u);
  EXPECT_EQ(m.skipped[0].label, "4 ranks, threads=1");
  EXPECT_EQ(m.skipped[0].reason, "needs 4 cores (ranks x threads), this host has 2");
  const auto all = hlm::expand_grid({1, 2, 4}, {{"threads", {1, 2}}}, kAxes, 1, 2, true, "w");
  EXPECT_EQ(all.points.size(), 6u);  // oversubscribe: run them anyway
}

TEST(ScalingGrid, NodesSpreadRanksEvenlyAndAreSkippedBeyondTheAllocation) {
  const std::vector<std::string> axes = {"threads", "nodes"};
  const auto two = hlm::expand_grid({1, 2, 3, 4}, {{"nodes", {1, 2}}}, axes, 1, 2, false, "w", 2);
  std::vector<std::string> labels;
  for (const auto& p : two.points) labels.push_back(p.label);
  // One rank is on one node: no "1 rank, nodes=2"; 4 ranks fit 2 cores only on 2 nodes.
  EXPECT_EQ(labels, (std::vector<std::string>{"1 rank, nodes=1", "2 ranks, nodes=1",
                                              "2 ranks, nodes=2", "4 ranks, nodes=2"}));
  ASSERT_EQ(two.skipped.size(), 3u);
  EXPECT_EQ(two.skipped[0].reason, "needs 3 cores (ranks x threads), this host has 2");
  EXPECT_EQ(two.skipped[2].label, "3 ranks, nodes=2");
  EXPECT_EQ(two.skipped[2].reason, "3 ranks do not split evenly over 2 nodes");
  // Every point is measured against the 1-rank point of its config less nodes.
  EXPECT_EQ(two.points[2].nodes, 2);
  EXPECT_EQ(two.points[2].baseline_config, two.points[0].baseline_config);
  EXPECT_EQ(two.points[2].baseline_config, "");

  const auto one = hlm::expand_grid({1, 2}, {{"nodes", {1, 2}}}, axes, 1, 2, false, "w", 1);
  ASSERT_EQ(one.skipped.size(), 1u);
  EXPECT_EQ(one.skipped[0].label, "2 ranks, nodes=2");
  EXPECT_NE(one.skipped[0].reason.find("needs 2 nodes, this run has one host"), std::string::npos);
  EXPECT_THROW(hlm::expand_grid({1}, {{"nodes", {0, 1}}}, axes, 1, 2, false, "w", 2),
               hlm::ConfigError);
  EXPECT_THROW(hlm::expand_grid({1, 2}, {{"nodes", {2}}}, axes, 1, 2, false, "w", 2),
               hlm::ConfigError);  // no 1-rank baseline
}

TEST(ScalingGrid, NoMatrixIsTheWorldSizesAlone) {
  const auto m = hlm::expand_grid({1, 2}, nlohmann::json::object(), kAxes, 3, 8, false, "w");
  ASSERT_EQ(m.points.size(), 2u);
  EXPECT_EQ(m.points[1].label, "2 ranks");
  EXPECT_EQ(m.points[1].threads, 3);
  EXPECT_EQ(m.points[1].dir, "w2");
}

TEST(ScalingGrid, BackendNamesBecomeFolderSafe) {
  const auto m = hlm::expand_grid({1}, {{"backend", {"my gloo"}}}, kAxes, 1, 8, false, "w");
  EXPECT_EQ(m.points[0].dir, "w1-backendmy_gloo");
}

TEST(ScalingGrid, AnUnknownAxisOrAnEmptyListNamesTheWorkflowLine) {
  try {
    hlm::expand_grid({1}, {{"threds", {1}}}, kAxes, 1, 8, false, "paper.yaml:12");
    FAIL() << "no error";
  } catch (const hlm::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("paper.yaml:12"), std::string::npos) << what;
    EXPECT_NE(what.find("'threds'"), std::string::npos) << what;
    EXPECT_NE(what.find("threads, context"), std::string::npos) << what;
  }
  EXPECT_THROW(hlm::expand_grid({1}, {{"batch", nlohmann::json::array()}}, kAxes, 1, 8, false, "w"),
               hlm::ConfigError);
}

}  // namespace
