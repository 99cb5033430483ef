// `hlm bench pretrain` (see bench_pretrain.h).
#include "cli/bench_pretrain.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "hlm/token_store.h"
#include "train/rank_job.h"

namespace fs = std::filesystem;

namespace hlm {

// A store of uniformly random tokens, like the peer's default input.
static std::string random_token_store(const std::string& dir, const BenchPretrainOptions& o) {
  const std::string path = dir + "/random.hlmt";
  TokenStoreWriter writer(path, uint32_t(o.vocab), "bench:random", /*resume=*/false);
  std::mt19937_64 rng(1234);
  std::uniform_int_distribution<uint32_t> token(0, uint32_t(o.vocab - 1));
  Beats beats;
  beats.record = "random";
  const size_t n = 1 << 20;
  for (size_t i = 0; i < n; ++i) {
    beats.tokens.push_back(token(rng));
    beats.positions.push_back(int64_t(i));
    beats.rr_seconds.push_back(0.8f);
  }
  writer.append(beats);
  writer.finish();
  return path;
}

int bench_pretrain_command(const PluginHost& plugins, const BenchPretrainOptions& o) {
  const fs::path dir = fs::temp_directory_path() / ("hlm_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string store = random_token_store(dir.string(), o);
  const nlohmann::json job = {{"stage", "bench"},
                              {"model",
                               {{"plugin", "gpt"},
                                {"vocab_size", o.vocab},
                                {"context", o.context},
                                {"d_model", o.d_model},
                                {"n_layer", o.layers},
                                {"n_head", o.heads},
                                {"d_ff", o.ff},
                                {"dropout", 0.0},
                                {"attention", o.attention}}},
                              {"backend", {{"plugin", o.backend}, {"timeout_s", 300}}},
                              {"options",
                               {{"steps", o.steps + o.warmup},
                                {"warmup_steps", 0},
                                {"batch", o.batch / o.accumulation},
                                {"accumulation", o.accumulation},
                                {"lr", 3e-4},
                                {"grad_clip", 0.0},
                                {"bf16", o.bf16},
                                {"cuda_graph", o.cuda_graph},
                                {"device", o.device},
                                {"threads", o.threads},
                                {"bind_cores", o.bind_cores},
                                {"bucket_cap_mb", o.bucket_cap_mb},
                                {"eval_batches", 0},
                                {"holdout_fraction", 0.0},
                                {"log_every", 1000000},
                                {"resume", false},
                                {"timing_skip_steps", o.warmup},
                                {"save_weights", false},
                                {"profile_step", o.profile_step}}},
                              {"token_store", store},
                              {"out_dir", (dir / "out").string()},
                              {"independent", o.independent}};
  const nlohmann::json r = run_job_on_ranks(job, o.world_size, plugins, nullptr);
  const double tokens_per_s =
      o.independent ? slowest_independent_tokens_per_s((dir / "out").string(), o.world_size)
                    : r.at("tokens_per_s").get<double>();
  const nlohmann::json out = {{"impl", "hlm-cpp"},
                              {"world_size", o.world_size},
                              {"backend", o.backend},
                              {"threads", o.threads},
                              {"bind_cores", o.bind_cores},
                              {"independent", o.independent},
                              {"batch", o.batch},
                              {"accumulation", o.accumulation},
                              {"context", o.context},
                              {"bf16", o.bf16},
                              {"cuda_graph", o.cuda_graph},
                              {"device", r.at("device")},
                              {"step_s_median", r.at("step_seconds_median")},
                              {"tokens_per_s", tokens_per_s},
                              {"mfu", r.at("mfu")},
                              {"peak_flops", r.at("peak_flops")},
                              {"loss_first", r.at("loss_first")},
                              {"loss_last", r.at("loss_last")},
                              {"allreduce_seconds", r.at("allreduce_seconds")},
                              {"data_wait_seconds", r.at("data_wait_seconds")},
                              {"phase_seconds_median", r.at("phase_seconds_median")},
                              {"peak_rss_bytes", r.at("peak_rss_bytes")}};
  std::printf("%s\n", out.dump().c_str());
  for (const auto& entry : fs::directory_iterator(dir / "out"))
    if (entry.path().filename().string().rfind("profile.", 0) == 0)
      fs::copy_file(entry.path(), fs::path(o.profile_dir) / entry.path().filename(),
                    fs::copy_options::overwrite_existing);
  fs::remove_all(dir);
  return 0;
}

}  // namespace hlm
