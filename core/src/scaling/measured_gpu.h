// What tools/device-check measured of hlm on a GPU, as the cluster prediction uses it in place
// of its assumptions: the model FLOPs utilisation of hlm's largest bf16 step, and its fastest
// step at the reference model's size (the floor a small step does not go under, launch-bound).
#pragma once
#include <string>

namespace hlm {

struct MeasuredGpu {
  std::string gpu;       // the device's name, as the check found it
  std::string torch;     // the LibTorch it ran on
  double mfu = 0;        // hlm's bf16 step with the most tokens, against the measured peak
  double step_floor_ms;  // hlm's fastest step at window 128 x 16 sequences, either dtype
};

// Reads device-check.json at `path`. Throws ConfigError naming `where` and the file when it is
// missing, not that JSON, written without a GPU (its CPU toy sizes say nothing of one), or
// holds no one-rank hlm step to read.
MeasuredGpu read_measured_gpu(const std::string& path, const std::string& where);

}  // namespace hlm
