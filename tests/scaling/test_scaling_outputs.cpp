// A study's tables, CSV, figures (drawn by the real gnuplot) and the prediction on the paper's
// hardware, from a study with known numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hlm/errors.h"
#include "scaling/cluster_prediction.h"
#include "scaling/scaling_plots.h"
#include "scaling/scaling_report.h"
#include "scaling/scaling_study.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

// One configuration at 1 and 2 ranks, two repeats each: 2-rank steps 10 % slower.
nlohmann::json run(double seconds, int steps, double step, double allreduce, int world = 1) {
  return {{"train_seconds", seconds},
          {"tokens_per_s", world * 2048 / step},
          {"steps", steps},
          {"step_seconds_median", step},
          {"phase_seconds_median",
           {{"forward", step * 0.3},
            {"backward", step * 0.6},
            {"optimizer", step * 0.1 - allreduce},
            {"allreduce", allreduce}}},
          {"data_wait_seconds", 0.0},
          {"mfu", 0.4},
          {"backend", "gloo"},
          {"bucket_cap_mb", 4.0},
          {"samples_per_rank_step", 16},
          {"gradient_bytes", 13.3e6},
          {"flops_per_token", 6.0e7},
          {"tokens_per_rank_step", 2048},
          {"step_without_allreduce_quantiles", std::vector<double>(21, step - allreduce)},
          {"fabric_probe",
           {{"ranks", 2},
            {"small_bytes", 4},
            {"small_seconds", 1e-4},
            {"large_bytes", 4 << 20},
            {"large_seconds", 4e-3}}}};
}

nlohmann::json study() {
  const auto grid =
      hlm::expand_grid({1, 2}, nlohmann::json::object(), {"threads"}, 1, 2, false, "w");
  const std::vector<std::vector<nlohmann::json>> runs = {
      {run(10.0, 40, 0.25, 0), run(10.4, 40, 0.26, 0)},
      {run(5.5, 20, 0.275, 0.02, 2), run(5.6, 20, 0.28, 0.02, 2)}};
  const std::vector<std::vector<double>> ceilings = {{}, {2048 / 0.25 * 0.95, 2048 / 0.26 * 0.95}};
  auto s = hlm::summarize_study(grid, runs, ceilings, hlm::Scaling::kStrong, 2, 2);
  hlm::predict_measured_points(s);
  s["cluster"] = hlm::predict_cluster(s, nlohmann::json::object(), "w");
  return s;
}

TEST(ScalingOutputs, SummaryHoldsMediansRatiosCeilingAndPrediction) {
  const auto s = study();
  const auto& two = s["points"][1];
  EXPECT_DOUBLE_EQ(two["seconds"]["median"], 5.55);
  EXPECT_DOUBLE_EQ(two["seconds"]["min"], 5.5);
  EXPECT_DOUBLE_EQ(two["speedup"], 10.2 / 5.55);
  EXPECT_DOUBLE_EQ(two["efficiency"], 10.2 / 5.55 / 2);
  EXPECT_DOUBLE_EQ(two["overhead_seconds"], 5.55 - 10.2 / 2);
  EXPECT_NEAR(two["ceiling"].get<double>(), 0.95, 1e-12);
  EXPECT_NEAR(two["step_efficiency"].get<double>(), 0.255 / 0.2775, 1e-12);
  // Against the ceiling repeat by repeat (the coupled step against the slowest independent
  // one: 0.25 / 0.95 against 0.275, then 0.26 / 0.95 against 0.28), the median of the two.
  const double r0 = 0.25 / 0.95 / 0.275, r1 = 0.26 / 0.95 / 0.28;
  EXPECT_NEAR(two["step_efficiency_vs_ceiling"]["min"].get<double>(), r0, 1e-12);
  EXPECT_NEAR(two["step_efficiency_vs_ceiling"]["max"].get<double>(), r1, 1e-12);
  EXPECT_NEAR(two["step_efficiency_vs_ceiling"]["median"].get<double>(), (r0 + r1) / 2, 1e-12);
  // From loop times: E = 10 / (2 x 5.5) and 10.4 / (2 x 5.6), each over its ceiling of 0.95.
  EXPECT_NEAR(two["efficiency_vs_ceiling"].get<double>(),
              (10.0 / 11.0 / 0.95 + 10.4 / 11.2 / 0.95) / 2, 1e-12);
  ASSERT_TRUE(two.contains("predicted"));
  EXPECT_TRUE(two["predicted"]["calibration"].get<bool>());
  EXPECT_GT(two["fabric"]["bandwidth_bytes_per_s"].get<double>(), 0);
}

TEST(ScalingOutputs, ClusterRowsCoverOneToFourNodesAndUnknownKeysAreErrors) {
  const auto s = study();
  const auto& rows = s["cluster"]["rows"];
  ASSERT_EQ(rows.size(), 6u);  // 1 and 2 GPUs, then 1-4 nodes of 4
  EXPECT_EQ(rows[5]["gpus"], 16);
  EXPECT_EQ(rows[5]["nodes"], 4);
  EXPECT_DOUBLE_EQ(rows[0]["efficiency"], 1.0);
  // Between nodes the ring runs at 200 Gb/s instead of NVLink's 1840: efficiency drops.
  EXPECT_LT(rows[3]["efficiency"].get<double>(), rows[2]["efficiency"].get<double>());
  const auto faster = hlm::predict_cluster(s, {{"inter_node_gbps", 1840.0}}, "w");
  EXPECT_GT(faster["rows"][3]["efficiency"].get<double>(), rows[3]["efficiency"].get<double>());
  // A point in bf16 computes at the tensor cores' peak (312 TFLOP/s), one in fp32 at 19.5:
  // without a step floor its one-GPU step is 312 / 19.5 = 16 times as long, all of it compute.
  auto in_bf16 = s;
  for (auto& point : in_bf16["points"]) point["bf16"] = true;
  const nlohmann::json no_floor = {{"gpu_step_floor_ms", 0}};
  const auto fp32_unfloored = hlm::predict_cluster(s, no_floor, "w");
  const auto bf16_unfloored = hlm::predict_cluster(in_bf16, no_floor, "w");
  const double fp32_step = fp32_unfloored["rows"][0]["step_seconds"];
  EXPECT_NEAR(fp32_step / bf16_unfloored["rows"][0]["step_seconds"].get<double>(), 312.0 / 19.5,
              0.01);
  // 6e7 FLOPs x 2048 tokens at 30 % of 19.5 TFLOP/s is 21 ms, over the default floor of 8.4 ms:
  // fp32 is unchanged by it, while bf16's 1.3 ms is lifted to the floor.
  EXPECT_NEAR(fp32_step, 6e7 * 2048 / (19.5e12 * 0.3), 1e-9);
  EXPECT_DOUBLE_EQ(rows[0]["step_seconds"].get<double>(), fp32_step);
  const auto bf16 = hlm::predict_cluster(in_bf16, nlohmann::json::object(), "w");
  EXPECT_NEAR(bf16["rows"][0]["step_seconds"].get<double>(), 8.4e-3, 1e-9);
  EXPECT_THROW(hlm::predict_cluster(s, {{"gpu_step_floor_ms", -1}}, "w.yaml:4"), hlm::ConfigError);
  EXPECT_THROW(hlm::predict_cluster(s, {{"gpus", 8}}, "w.yaml:4"), hlm::ConfigError);
  EXPECT_THROW(hlm::predict_cluster(s, {{"gpu_mfu", 0}}, "w.yaml:4"), hlm::ConfigError);
  EXPECT_THROW(hlm::predict_cluster(s, {{"nodes", {0, 1}}}, "w.yaml:4"), hlm::ConfigError);
}

// A device check's JSON (tools/device-check) replaces the assumed MFU and step floor with
// hlm's own: the MFU of its largest bf16 step, the floor its fastest step at window 128 x 16.
TEST(ScalingOutputs, ADeviceCheckSetsTheMfuAndStepFloorUnlessTheBlockDoes) {
  hlm::test::ScratchDir dir("hlm_measured_gpu");
  const auto point = [](int context, int batch, bool bf16, bool graph, double step, double mfu) {
    return nlohmann::json{{"world_size", 1},       {"device", "cuda:0"}, {"context", context},
                          {"batch", batch},        {"bf16", bf16},       {"cuda_graph", graph},
                          {"step_s_median", step}, {"mfu", mfu}};
  };
  nlohmann::json check = {
      {"gpu", "NVIDIA H200"},
      {"torch", "2.11.0+cu130"},
      {"hlm",
       {point(128, 16, false, false, 4e-3, 0.05), point(128, 16, false, true, 1.5e-3, 0.12),
        point(1024, 256, true, false, 0.3, 0.45)}}};
  const std::string path = (dir.path / "device-check.json").string();
  std::ofstream(path) << check.dump();
  auto in_bf16 = study();
  for (auto& p : in_bf16["points"]) p["bf16"] = true;
  const auto measured = hlm::predict_cluster(in_bf16, {{"measured", path}}, "w");
  EXPECT_DOUBLE_EQ(measured["params"]["gpu_mfu"].get<double>(), 0.45);
  EXPECT_DOUBLE_EQ(measured["params"]["gpu_step_floor_ms"].get<double>(), 1.5);
  EXPECT_NEAR(measured["rows"][0]["step_seconds"].get<double>(), 1.5e-3, 1e-12);
  auto with_cluster = in_bf16;
  with_cluster["cluster"] = measured;
  const std::string report = hlm::scaling_report_md(with_cluster, {}, "", "");
  EXPECT_NE(report.find("measured by tools/device-check on NVIDIA H200, LibTorch 2.11.0+cu130"),
            std::string::npos)
      << report;
  const auto chosen = hlm::predict_cluster(in_bf16, {{"measured", path}, {"gpu_mfu", 0.2}}, "w");
  EXPECT_DOUBLE_EQ(chosen["params"]["gpu_mfu"].get<double>(), 0.2);
  // A check written without a GPU, or no file at all, is refused naming the file.
  check["gpu"] = nullptr;
  std::ofstream(path) << check.dump();
  try {
    hlm::predict_cluster(in_bf16, {{"measured", path}}, "w.yaml:9");
    FAIL() << "a CPU device check accepted";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("without a GPU"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(hlm::predict_cluster(in_bf16, {{"measured", path + ".missing"}}, "w"),
               hlm::ConfigError);
}

// The device check that ran on the GPU machine, kept in docs/measurements for cluster.measured,
// stays readable: its bf16 step at window 1024 x 256 and its fastest step at 128 x 16.
TEST(ScalingOutputs, TheH200DeviceCheckInTheDocsGivesItsMfuAndStepFloor) {
  const auto m = hlm::predict_cluster(
      study(), {{"measured", HLM_SOURCE_DIR "/docs/measurements/h200-device-check.json"}}, "w");
  EXPECT_NEAR(m["params"]["gpu_mfu"].get<double>(), 0.197, 5e-4);
  EXPECT_NEAR(m["params"]["gpu_step_floor_ms"].get<double>(), 2.20, 5e-3);
}

// Where the ranks measured how much of backward follows the first bucket's launch, each point
// is predicted with that overlap (none is a calibration); the median over the repeats is used.
TEST(ScalingOutputs, AMeasuredOverlapPredictsEveryPoint) {
  const auto grid =
      hlm::expand_grid({1, 2}, nlohmann::json::object(), {"threads"}, 1, 2, false, "w");
  auto two = run(5.5, 20, 0.275, 0.02, 2), other = run(5.6, 20, 0.28, 0.02, 2);
  two["backward_overlap"] = 0.4;
  other["backward_overlap"] = 0.6;
  const std::vector<std::vector<nlohmann::json>> runs = {
      {run(10.0, 40, 0.25, 0), run(10.4, 40, 0.26, 0)}, {two, other}};
  const std::vector<std::vector<double>> ceilings = {{}, {2048 / 0.25 * 0.95, 2048 / 0.26 * 0.95}};
  auto s = hlm::summarize_study(grid, runs, ceilings, hlm::Scaling::kStrong, 2, 2);
  hlm::predict_measured_points(s);
  const auto& predicted = s["points"][1]["predicted"];
  EXPECT_NEAR(predicted["overlap"].get<double>(), 0.5, 1e-12);
  EXPECT_FALSE(predicted["calibration"].get<bool>());
  // A given overlap wins over the measured one.
  hlm::predict_measured_points(s, 0.1);
  EXPECT_NEAR(s["points"][1]["predicted"]["overlap"].get<double>(), 0.1, 1e-12);
  // With nothing launched before backward ends, the whole all-reduce (about 13 ms here) is
  // exposed; at 0.5 all but the last bucket hides: a slower step predicted at 0.
  auto exposed = s;
  exposed["points"][1]["backward_overlap"] = 0.0;
  hlm::predict_measured_points(exposed);
  hlm::predict_measured_points(s);
  EXPECT_GT(exposed["points"][1]["predicted"]["step_seconds"].get<double>(),
            s["points"][1]["predicted"]["step_seconds"].get<double>() + 0.005);
}

TEST(ScalingOutputs, CsvHasAHeaderAndARowPerPoint) {
  const std::string csv = hlm::scaling_csv(study());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_EQ(csv.rfind("label,config,world_size,threads,", 0), 0u);
  EXPECT_NE(csv.find("\n2 ranks,,2,1,2,20,5.55,"), std::string::npos) << csv;
}

TEST(ScalingOutputs, GnuplotDrawsFourFiguresAsPngAndSvg) {
  hlm::test::ScratchDir dir("hlm_scaling_plots");
  std::string note;
  const auto plots = hlm::render_scaling_plots(study(), dir.path.string(), &note);
  ASSERT_EQ(plots.size(), 4u) << note;
  for (const auto& p : plots) {
    std::ifstream png(p.png, std::ios::binary);
    char magic[8] = {};
    png.read(magic, 8);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << p.png;
    EXPECT_GT(fs::file_size(p.png), 2000u) << p.png;
    std::ifstream svg(p.svg);
    const std::string text((std::istreambuf_iterator<char>(svg)), {});
    EXPECT_NE(text.find("<svg"), std::string::npos) << p.svg;
  }
  const std::string md = hlm::scaling_report_md(study(), plots, note, "plots/");
  EXPECT_NE(md.find("![Parallel efficiency E = S / N](plots/efficiency.png)"), std::string::npos);
  EXPECT_NE(md.find("| 2 ranks | 0.919 |"), std::string::npos)
      << md;  // step E in the prediction table
  EXPECT_NE(md.find("The paper measured speedups of 1.6 on 2 GPUs"), std::string::npos);
}

TEST(ScalingOutputs, ALossCurveIsAPlotToo) {
  hlm::test::ScratchDir dir("hlm_loss_plot");
  std::string note;
  const auto plots = hlm::render_line_plot("loss", "Loss", "step", "loss", {3.0, 2.5, 2.2, 2.0},
                                           dir.path.string(), &note);
  ASSERT_EQ(plots.size(), 1u) << note;
  EXPECT_TRUE(fs::exists(plots[0].png));
}

// Workflow text reaches the gnuplot script (the run folder, stage ids and matrix values in
// titles): a backquoted command in it must stay text, and a newline must not end a command.
TEST(ScalingOutputs, WorkflowTextInAPlotNeverRunsACommand) {
  hlm::test::ScratchDir dir("hlm_plot_injection");
  const fs::path marker = dir.path / "ran";
  const std::string command = "`touch " + marker.string() + "`";
  const fs::path out = dir.path / ("runs" + command + "'x");
  fs::create_directories(out);
  std::string note;
  const auto plots =
      hlm::render_line_plot("loss", "Training loss (pretrain[lr=" + command + "\nshow version])",
                            "step", "loss", {3.0, 2.5}, out.string(), &note);
  ASSERT_EQ(plots.size(), 1u) << note;
  EXPECT_TRUE(fs::exists(plots[0].png));
  EXPECT_FALSE(fs::exists(marker)) << "gnuplot ran a command from the plot's text";
}

}  // namespace
