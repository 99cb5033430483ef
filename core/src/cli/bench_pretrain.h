// `hlm bench pretrain`: trains the reference model (spec hlm-gpt-small by default) on random
// tokens, as ../shared/peers/torch_pretrain.py does, and prints one JSON line with the same
// fields (tokens_per_s, step_s_median, loss_first, loss_last, peak_rss_bytes, ...).
#pragma once
#include <string>

#include "plugin/plugin_host.h"

namespace hlm {

struct BenchPretrainOptions {
  int64_t vocab = 512, context = 128, d_model = 256, layers = 4, heads = 4, ff = 1024;
  int64_t batch = 16, steps = 20, warmup = 3;
  int64_t accumulation = 1;  // micro-batches of batch / accumulation sequences per step
  int64_t profile_step = 0;  // writes profile.rank<R>.step<N>.json into profile_dir
  std::string profile_dir = ".";
  int threads = 1, world_size = 1;
  bool bf16 = false;
  bool cuda_graph = false;         // forward and backward replayed from a CUDA graph
  std::string device = "cpu";      // cpu, cuda or auto, as the stages' device param
  std::string attention = "auto";  // the model's attention: auto, fused or written
  bool bind_cores = true;          // ranks on disjoint cores (core_binding.h)
  // The world_size ranks train alone, side by side, with no communication: tokens_per_s is
  // then the slowest rank's (the host's ceiling for world_size coupled ranks).
  bool independent = false;
  std::string backend = "gloo";  // or "shm" (ranks on one host)
  // The best of 25, 4 and 1 MB for hlm-gpt-small on 2 ranks (docs/benchmarks.md).
  double bucket_cap_mb = 4;
};

int bench_pretrain_command(const PluginHost& plugins, const BenchPretrainOptions& options);

}  // namespace hlm
