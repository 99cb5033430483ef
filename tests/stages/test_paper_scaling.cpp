// The paper's scaling study at its CI size: the grid this host can run, the points it cannot
// listed with why, the four figures as images, the tables, and the paper's equations holding
// on every measured row.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

TEST(PaperScaling, TheCiSizeProducesTablesFiguresAndPredictions) {
  hlm::test::ScratchDir runs("hlm_paper_scaling");
  // 4 steps a point on a smaller model (d_model and d_ff a quarter of the ci size's, half its
  // layers): this test reads what the study writes, not how well it times (4 steps still
  // divide evenly between 2 ranks).
  const auto r = hlm::test::run_hlm(
      "run workflows/paper-scaling.yaml vars.size=ci vars.grid.ci.steps=4 vars.model.d_model=64 "
      "vars.model.d_ff=256 vars.model.n_layer=2 --runs-dir " +
      runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path stage = hlm::test::run_dir_of(r.output) / "scaling";
  const auto study = nlohmann::json::parse(hlm::test::read_text(stage / "scaling.json"));
  const auto& points = study["points"];
  // 2 windows x (1 and 2 ranks at 1 thread, 1 rank at 2 threads) on 2 cores; more elsewhere.
  ASSERT_GE(points.size(), 6u) << study.dump(2);
  EXPECT_EQ(points.size() + study["skipped"].size(), 8u);
  for (const auto& s : study["skipped"])
    EXPECT_NE(s["reason"].get<std::string>().find("cores"), std::string::npos) << s;
  std::map<std::string, double> t1;
  for (const auto& p : points)
    if (p["world_size"] == 1) t1[p["config"]] = p["seconds"]["median"];
  for (const auto& p : points) {
    EXPECT_EQ(p["runs"], 3);
    const int n = p["world_size"];
    // Equations 1-3 on the measured times (steps divide evenly here: no per-sample scaling).
    const double tn = p["seconds"]["median"], base = t1.at(p["config"]);
    EXPECT_NEAR(p["speedup"].get<double>(), base / tn, 1e-9) << p["label"];
    EXPECT_NEAR(p["efficiency"].get<double>(), base / tn / n, 1e-9) << p["label"];
    EXPECT_NEAR(p["overhead_seconds"].get<double>(), tn - base / n, 1e-9) << p["label"];
    if (n > 1) {
      EXPECT_TRUE(p.contains("ceiling")) << p["label"];
      EXPECT_TRUE(p.contains("predicted")) << p["label"];
    }
  }
  for (const char* plot : {"time_vs_threads", "time_speedup", "efficiency", "overhead"}) {
    std::ifstream png(stage / "plots" / (std::string(plot) + ".png"), std::ios::binary);
    char magic[4] = {};
    png.read(magic, 4);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << plot;
  }
  const std::string table = hlm::test::read_text(stage / "scaling.md");
  EXPECT_NE(table.find("| 4 | 16 |"), std::string::npos) << table;  // 4 nodes x 4 GPUs
  EXPECT_NE(table.find("### Why, and predicted"), std::string::npos);
}

TEST(PaperScaling, AnUnknownSizeNamesWhatExists) {
  const auto r = hlm::test::run_hlm("run workflows/paper-scaling.yaml vars.size=medium --dry-run");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("'medium' not found"), std::string::npos) << r.output;
}

}  // namespace
