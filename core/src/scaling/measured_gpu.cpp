// device-check.json read for the cluster prediction (see measured_gpu.h).
#include "scaling/measured_gpu.h"

#include <limits>

#include "hlm/errors.h"
#include "util/json_file.h"

namespace hlm {

MeasuredGpu read_measured_gpu(const std::string& path, const std::string& where) {
  const auto check = read_json(path);
  const std::string fix =
      "; give cluster.measured the device-check.json that `tools/device-check run` wrote on a "
      "GPU machine, or leave it out to use gpu_mfu and gpu_step_floor_ms";
  if (!check || !check->is_object() || !check->contains("hlm") || !check->at("hlm").is_array())
    throw ConfigError("{}: cluster.measured '{}' is missing or not a device check's JSON{}", where,
                      path, fix);
  if (!check->value("gpu", nlohmann::json()).is_string())
    throw ConfigError(
        "{}: cluster.measured '{}' was written on a machine without a GPU (CPU toy sizes){}", where,
        path, fix);
  MeasuredGpu m{check->at("gpu"), check->value("torch", ""), 0,
                std::numeric_limits<double>::infinity()};
  double most_tokens = 0;
  for (const auto& point : check->at("hlm")) {
    if (point.value("world_size", 1) != 1) continue;
    if (point.value("device", "").rfind("cuda", 0) != 0) continue;  // "cuda:0"
    const double tokens = point.value("context", 0.0) * point.value("batch", 0.0);
    const double step_ms = point.value("step_s_median", 0.0) * 1e3;
    if (point.value("bf16", false) && tokens > most_tokens) {
      most_tokens = tokens;
      m.mfu = point.value("mfu", 0.0);
    }
    if (point.value("context", 0) == 128 && point.value("batch", 0) == 16 && step_ms > 0)
      m.step_floor_ms = std::min(m.step_floor_ms, step_ms);
  }
  if (m.mfu <= 0 || m.step_floor_ms == std::numeric_limits<double>::infinity())
    throw ConfigError(
        "{}: cluster.measured '{}' holds no one-rank CUDA step of hlm in bf16 and at window 128 "
        "x 16{}",
        where, path, fix);
  return m;
}

}  // namespace hlm
