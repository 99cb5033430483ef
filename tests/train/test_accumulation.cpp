// Gradient accumulation in the trainer: four micro-batches of 2 sequences make the same
// optimizer steps as one batch of 8 (micro-batch k takes the samples after micro-batch k-1),
// on 1 rank and on 2 ranks. At 2 ranks the ranks split the 16 samples of a step differently
// (rank 0 takes 0-7, or 0-1, 4-5, 8-9, 12-13), so rank 0's logged loss differs while the
// averaged gradient, and so the trained weights, do not: the held-out loss is compared there.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

nlohmann::json pretrain_results(const hlm::test::ScratchDir& runs, const std::string& overrides) {
  const auto r = hlm::test::run_hlm("run tests/fixtures/train_small.yaml pretrain.steps=20 " +
                                    overrides + " --runs-dir " + runs.path.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(fs::path(hlm::test::report_path(r.output)).parent_path() / "pretrain" /
                   "manifest.json");
  return nlohmann::json::parse(in)["results"];
}

TEST(Accumulation, FourMicroBatchesOfTwoTrainLikeOneBatchOfEight) {
  for (const std::string world : {"1", "2"}) {
    SCOPED_TRACE("world size " + world);
    hlm::test::ScratchDir runs("hlm_accumulation_w" + world);
    const auto whole = pretrain_results(runs, "vars.world_size=" + world + " pretrain.batch=8");
    const auto split = pretrain_results(
        runs, "vars.world_size=" + world + " pretrain.batch=2 pretrain.accumulation=4");
    const double held_out = whole["eval_loss"];
    EXPECT_NEAR(split["eval_loss"].get<double>(), held_out, 1e-5 * held_out);
    if (world != "1") continue;
    const auto a = whole["losses"].get<std::vector<double>>(),
               b = split["losses"].get<std::vector<double>>();
    ASSERT_EQ(a.size(), 20u);
    ASSERT_EQ(b.size(), 20u);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(b[i], a[i], 1e-5 * a[i]) << "step " << i + 1;
  }
}

}  // namespace
