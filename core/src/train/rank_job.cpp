// Running a training job on one rank or on several rank processes (see rank_job.h).
#include "train/rank_job.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "dist/preemption.h"
#include "engine/run_directory.h"
#include "hlm/backend.h"
#include "hlm/errors.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "metrics/metrics.h"
#include "multiproc/launcher.h"
#include "ops/compute.h"
#include "train/trainer.h"

namespace hlm {

namespace {

c10::intrusive_ptr<c10d::ProcessGroup> make_group(const nlohmann::json& job,
                                                  const PluginHost& plugins, const DistEnv& env,
                                                  std::shared_ptr<Backend>& backend) {
  c10d::TCPStoreOptions store_options;
  store_options.port = uint16_t(env.master_port);
  store_options.isServer = env.rank == 0;
  store_options.numWorkers = env.world_size;
  store_options.waitWorkers = true;
  store_options.timeout = std::chrono::seconds(300);
  c10::intrusive_ptr<c10d::TCPStore> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {
    // c10d reports a taken port as "failed to bind ... (errno: 98 - Address already in use)".
    if (env.rank == 0 && std::string(e.what()).find("errno: 98") != std::string::npos)
      throw AddressInUse("{}:{} is taken", env.master_addr, env.master_port);
    throw;
  }
  backend = plugins.create<Backend>("backend", job.at("backend").at("plugin"), job.at("backend"));
  return backend->create_group(store, env.rank, env.world_size);
}

uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return uint64_t(usage.ru_maxrss) * 1024;
}

}  // namespace

nlohmann::json run_rank_job(const nlohmann::json& job, const PluginHost& plugins,
                            const DistEnv& env) {
  TrainJob train;
  train.options = TrainOptions::from_params(job.at("options"));
  // A masked model (bert) declares its masking rate among its own parameters.
  train.options.mask_probability = job.at("model").value("mask_probability", 0.15);
  train.out_dir = job.at("out_dir");
  train.env = env;
  set_compute_threads(train.options.threads);
  std::shared_ptr<Backend> backend;
  if (env.distributed()) train.group = make_group(job, plugins, env, backend);

  torch::manual_seed(train.options.seed);  // same initial weights everywhere (then broadcast)
  auto model = plugins.create<Model>("model", job.at("model").at("plugin"), job.at("model"));
  auto store = TokenStore::open(job.at("token_store"));
  const std::string stage = job.value("stage", "pretrain");
  const int64_t log_every = std::max<int64_t>(1, train.options.log_every);
  train.on_step = [&](const TrainStep& s) {
    metrics().train_step(stage, s);
    if (env.rank == 0 && (s.step % log_every == 0 || s.step == train.options.steps))
      spdlog::info("[{}] step {}/{} loss {:.4f} lr {:.2e} {:.0f} tok/s", stage, s.step,
                   train.options.steps, s.loss, s.learning_rate,
                   double(s.rank_tokens * env.world_size) / s.step_seconds);
  };
  train.on_checkpoint = [&](double seconds) { metrics().checkpoint_written(stage, seconds); };
  const TrainResult r = train_language_model(*model, store, train);
  nlohmann::json result = {{"rank", env.rank},
                           {"world_size", r.world_size},
                           {"steps", r.steps},
                           {"losses", r.losses},
                           {"loss_first", r.losses.empty() ? 0.0 : r.losses.front()},
                           {"loss_last", r.losses.empty() ? 0.0 : r.losses.back()},
                           {"eval_loss", r.eval_loss},
                           {"train_seconds", r.train_seconds},
                           {"step_seconds_median", r.step_seconds_median},
                           {"tokens_per_s", r.tokens_per_s},
                           {"mfu", r.mfu},
                           {"peak_flops", r.peak_flops},
                           {"data_wait_seconds", r.data_wait_seconds},
                           {"allreduce_seconds", r.allreduce_seconds},
                           {"phase_seconds_median",
                            {{"forward", r.forward_seconds_median},
                             {"backward", r.backward_seconds_median},
                             {"optimizer", r.optimizer_seconds_median},
                             {"allreduce", r.allreduce_seconds_median}}},
                           {"flops_per_token", model->flops_per_token()},
                           {"checkpoint", r.checkpoint},
                           {"peak_rss_bytes", peak_rss_bytes()}};
  metrics().eval_loss(stage, r.eval_loss, uint64_t(r.steps));
  std::filesystem::create_directories(train.out_dir);
  write_text_atomic(train.out_dir + "/result_rank" + std::to_string(env.rank) + ".json",
                    result.dump(2));
  return result;
}

nlohmann::json run_job_on_ranks(const nlohmann::json& job, int world_size,
                                const PluginHost& plugins,
                                const std::function<void(const std::string&)>& progress) {
  if (world_size <= 1) return run_rank_job(job, plugins, DistEnv{});
  const std::string out_dir = job.at("out_dir");
  std::filesystem::create_directories(out_dir);
  const std::string job_path = out_dir + "/job.json";
  write_text_atomic(job_path, job.dump(2));
  LaunchOptions launch;
  launch.nproc = world_size;
  launch.argv = {std::filesystem::read_symlink("/proc/self/exe").string(), "rank", job_path};
  const int threads = job.at("options").value("threads", 1);
  launch.env["OPENBLAS_NUM_THREADS"] = std::to_string(threads);
  launch.env["OMP_NUM_THREADS"] = std::to_string(threads);
  launch.log_dir = out_dir;
  // Each rank serves its own metrics and adds itself to the run's Prometheus targets.
  if (const std::string targets = metrics().targets_dir(); !targets.empty()) {
    launch.env["HLM_METRICS_TARGETS"] = targets;
    launch.env["HLM_METRICS_RUN"] = metrics().run_label();
  }
  launch.stop_requested = stop_signal_received;
  launch.on_line = [&](int rank, const std::string& line) {
    if (rank == 0 && progress) progress(line);
  };
  // A failed rank stops the group; it is restarted (resuming from the newest complete
  // checkpoint) up to max_restarts times. A stop signal is not a failure: it propagates.
  const int max_restarts = job.value("max_restarts", 0);
  for (int attempt = 0;; ++attempt) {
    const LaunchResult launched = launch_ranks(launch);
    if (launched.ok()) break;
    const int code = launched.exit_codes[launched.failed_rank];
    const std::string where = "rank " + std::to_string(launched.failed_rank) + " of " +
                              std::to_string(world_size) + " exited with " + std::to_string(code) +
                              "; see " + out_dir + "/rank" + std::to_string(launched.failed_rank) +
                              ".log";
    // Ranks we forwarded a stop to may have died of it before their handler was installed:
    // still a stop, not a failure to restart.
    if (code == kExitRequeue || stop_signal_received())
      throw Preempted("stopped by a signal: {}; continue with hlm run --resume RUN_DIR", where);
    if (attempt >= max_restarts) throw Error(where);
    if (progress)
      progress(where + "; restarting the group from the newest checkpoint (restart " +
               std::to_string(attempt + 1) + " of " + std::to_string(max_restarts) + ")");
  }
  std::ifstream in(out_dir + "/result_rank0.json");
  return nlohmann::json::parse(in);
}

}  // namespace hlm
