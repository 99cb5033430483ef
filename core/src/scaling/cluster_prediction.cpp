// Prediction on the paper's hardware (see cluster_prediction.h).
#include "scaling/cluster_prediction.h"

#include <algorithm>
#include <set>
#include <string>

#include "hlm/errors.h"
#include "scaling/measured_gpu.h"
#include "scaling/performance_model.h"
#include "scaling/scaling_grid.h"

namespace hlm {
namespace {

// A100 SXM: 312 TFLOP/s dense bf16 and 19.5 TFLOP/s fp32 (156 with TF32 tensor cores, which
// PyTorch leaves off for matmuls since 1.12: set gpu_peak_tflops_fp32 to 156 where it is on);
// NCCL's all-reduce bus bandwidth over NVLink 3 is about 230 GB/s (1840 Gb/s) in nccl-tests on DGX
// A100; HDR InfiniBand is 200 Gb/s per port. The MFU and the overlap are assumptions to replace
// with a measurement on the target.
// The step floor: a small model's eager PyTorch step is bound by kernel launches, not FLOPs.
// The reference model at the spec's size (window 128, 16 sequences) stepped in 8.4 ms in fp32
// and 9.0 ms in bf16 on an H200 (tools/bench/gpu-reference-model.py, docs/scaling.md): a
// faster chip or bf16 does not shorten it, where peak x MFU alone predicted 0.45 ms in bf16.
const nlohmann::json kDefaults = {
    {"nodes", {1, 2, 3, 4}},
    {"gpus_per_node", 4},
    {"single_node_gpus", {1, 2}},
    {"gpu_peak_tflops", 312.0},
    {"gpu_peak_tflops_fp32", 19.5},
    {"gpu_mfu", 0.3},
    {"gpu_step_floor_ms", 8.4},
    {"intra_node_gbps", 1840.0},
    {"intra_node_latency_us", 5.0},
    {"inter_node_gbps", 200.0},
    {"inter_node_latency_us", 10.0},
    {"overlap", 0.5},
    {"measured", ""},
};

// The keys a cluster block may set, for the error that names an unknown one.
std::string known_keys() {
  std::string keys;
  for (const auto& [key, value] : kDefaults.items()) keys += (keys.empty() ? "" : ", ") + key;
  return keys;
}

// cluster.measured: device-check.json's MFU and step floor in place of the assumed ones, unless
// the block sets those keys itself.
void apply_measured_gpu(nlohmann::json& c, const nlohmann::json& params, const std::string& where) {
  if (!c.at("measured").is_string())
    throw ConfigError("{}: cluster.measured must be the path of a device-check.json (got {})",
                      where, c.at("measured").dump());
  const std::string path = c.at("measured");
  if (path.empty()) return;
  const MeasuredGpu m = read_measured_gpu(path, where);
  if (!params.contains("gpu_mfu")) c["gpu_mfu"] = m.mfu;
  if (!params.contains("gpu_step_floor_ms")) c["gpu_step_floor_ms"] = m.step_floor_ms;
  c["measured_on"] = m.gpu + ", LibTorch " + m.torch;
}

}  // namespace

nlohmann::json predict_cluster(const nlohmann::json& study, const nlohmann::json& params,
                               const std::string& where) {
  nlohmann::json c = kDefaults;
  for (const auto& [key, value] : params.items()) {
    if (!kDefaults.contains(key))
      throw ConfigError("{}: cluster has no key '{}' (keys: {})", where, key, known_keys());
    c[key] = value;
  }
  apply_measured_gpu(c, params, where);
  for (const char* key : {"gpus_per_node", "gpu_peak_tflops", "gpu_peak_tflops_fp32", "gpu_mfu",
                          "intra_node_gbps", "inter_node_gbps"})
    if (!c.at(key).is_number() || c.at(key).get<double>() <= 0)
      throw ConfigError("{}: cluster.{} must be a positive number (got {})", where, key,
                        c.at(key).dump());
  for (const char* key : {"nodes", "single_node_gpus"})
    for (const auto& v : c.at(key))
      if (!v.is_number_integer() || v.get<int>() < 1)
        throw ConfigError("{}: cluster.{} must list counts of at least 1 (got {})", where, key,
                          c.at(key).dump());
  if (!c.at("gpu_step_floor_ms").is_number() || c.at("gpu_step_floor_ms").get<double>() < 0)
    throw ConfigError("{}: cluster.gpu_step_floor_ms must be a number of at least 0 (got {})",
                      where, c.at("gpu_step_floor_ms").dump());
  const Fabric nvlink{"intra-node", c.at("intra_node_gbps").get<double>() * 1e9 / 8,
                      c.at("intra_node_latency_us").get<double>() * 1e-6};
  const Fabric network{"inter-node", c.at("inter_node_gbps").get<double>() * 1e9 / 8,
                       c.at("inter_node_latency_us").get<double>() * 1e-6};
  const int per_node = c.at("gpus_per_node");
  std::vector<std::pair<int, int>> layouts;  // (nodes, gpus)
  for (int g : c.at("single_node_gpus")) layouts.push_back({1, g});
  for (int nodes : c.at("nodes")) layouts.push_back({nodes, nodes * per_node});

  nlohmann::json rows = nlohmann::json::array();
  std::set<std::string> predicted;  // configurations, threads per rank aside (no GPU has them)
  for (const auto& point : study.at("points")) {
    if (point.at("world_size") != 1) continue;
    const std::string config = axes_text(point.at("axes"), "threads");
    if (!predicted.insert(config).second) continue;
    const auto& ph = point.at("phases");
    const double here = ph.at("forward").get<double>() + ph.at("backward").get<double>() +
                        ph.at("optimizer").get<double>();
    const double tokens = point.at("tokens_per_rank_step");
    // bf16 autocast runs the products on the tensor cores; fp32 at the fp32 peak.
    const double peak_tflops =
        point.value("bf16", false) ? c.at("gpu_peak_tflops") : c.at("gpu_peak_tflops_fp32");
    const double flops = peak_tflops * 1e12 * c.at("gpu_mfu").get<double>();
    const double gpu_compute = std::max(c.at("gpu_step_floor_ms").get<double>() * 1e-3,
                                        point.at("flops_per_token").get<double>() * tokens / flops);
    const double scale = here > 0 ? gpu_compute / here : 0;
    ModelInputs in;
    in.alone = {ph.at("forward").get<double>() * scale, ph.at("backward").get<double>() * scale,
                ph.at("optimizer").get<double>() * scale, ph.at("data_wait"),
                /*step_quantiles=*/{}};  // this host's step jitter says nothing of a GPU's
    in.gradient_bytes = point.at("gradient_bytes");
    in.buckets = point.at("gradient_buckets");
    in.overlap = c.at("overlap");
    for (const auto& [nodes, gpus] : layouts) {
      in.fabric = nodes > 1 ? network : nvlink;
      const Prediction pr = predict_step(in, gpus);
      rows.push_back({{"config", config},
                      {"nodes", nodes},
                      {"gpus", gpus},
                      {"step_seconds", pr.step_seconds},
                      {"tokens_per_s", pr.step_seconds > 0 ? gpus * tokens / pr.step_seconds : 0.0},
                      {"efficiency", pr.efficiency},
                      {"speedup", pr.efficiency * gpus},
                      {"communication_seconds", pr.communication_seconds},
                      {"data_seconds", pr.data_seconds},
                      {"bottleneck", pr.bottleneck},
                      {"fix", pr.fix}});
    }
  }
  return {{"params", c}, {"rows", rows}};
}

}  // namespace hlm
