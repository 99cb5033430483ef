// Running a training job on one rank or on several rank processes (see rank_job.h).
#include "train/rank_job.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/fabric_probe.h"
#include "distributed/host_address.h"
#include "distributed/preemption.h"
#include "hlm/backend.h"
#include "hlm/errors.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "hlm/util.h"
#include "metrics/energy.h"
#include "metrics/heartbeat.h"
#include "metrics/metrics.h"
#include "ops/compute.h"
#include "train/gpu_usage.h"
#include "train/train_device.h"
#include "train/trainer.h"
#include "util/atomic_file.h"
#include "util/core_binding.h"
#include "util/json_file.h"

namespace hlm {

namespace {

// Rank 0 waits for every rank to check in at the store (hlm/arrived/<rank>), so that a rank
// that never starts is named instead of surfacing as a collective's timeout.
void wait_for_every_rank(c10d::Store& store, const DistEnv& env, double timeout_seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    std::vector<int> missing;
    for (int r = 0; r < env.world_size; ++r)
      if (!store.check({"hlm/arrived/" + std::to_string(r)})) missing.push_back(r);
    if (missing.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string list;
      for (int r : missing) list += (list.empty() ? "" : ", ") + std::to_string(r);
      throw Error(
          "rendezvous at {}:{}: rank{} {} of {} never arrived within {:g} s "
          "(rendezvous_timeout_seconds); see {} log, and check that every rank was started "
          "and reaches this address",
          env.master_addr, env.master_port, missing.size() > 1 ? "s" : "", list, env.world_size,
          timeout_seconds, missing.size() > 1 ? "their" : "its");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

c10::intrusive_ptr<c10d::Backend> make_group(const nlohmann::json& job, const PluginHost& plugins,
                                             const DistEnv& env,
                                             std::shared_ptr<Backend>& backend) {
  const double timeout_seconds = job.value("rendezvous_timeout_seconds", 300.0);
  c10d::TCPStoreOptions store_options;
  store_options.port = uint16_t(env.master_port);
  store_options.isServer = env.rank == 0 && !env.agent_store;
  store_options.numWorkers = env.world_size;
  store_options.waitWorkers = false;  // wait_for_every_rank below, naming the missing ones
  store_options.timeout = std::chrono::milliseconds(int64_t(std::max(0.1, timeout_seconds) * 1000));
  c10::intrusive_ptr<c10d::TCPStore> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {
    // c10d reports a taken port as "failed to bind ... (errno: 98 - Address already in use)".
    if (env.rank == 0 && std::string(e.what()).find("errno: 98") != std::string::npos)
      throw AddressInUse("{}:{} is taken", env.master_addr, env.master_port);
    if (env.rank != 0 || env.agent_store)
      throw Error(
          "rank {} could not reach the rendezvous endpoint {}:{} within {:g} s "
          "(rendezvous_timeout_seconds): rank 0, which serves it, did not start, or this "
          "host cannot reach that address ({})",
          env.rank, env.master_addr, env.master_port, timeout_seconds, e.what());
    throw;
  }
  c10::intrusive_ptr<c10d::Store> group_store = store;
  if (env.agent_store)  // torchrun's store outlives a restart: each attempt keys its own
    group_store = c10::make_intrusive<c10d::PrefixStore>(
        "/worker/attempt_" + std::to_string(env.agent_restart_count), store);
  // With a shared token every key of the group lives under a name derived from it: a process
  // that does not know the token reaches the store but can neither join nor disturb the group
  // (the store cannot list keys). The store's protocol is plain TCP: this keeps out stray
  // processes, not an eavesdropper on the network.
  if (const char* token = std::getenv("HLM_RENDEZVOUS_TOKEN"); token != nullptr && *token != 0)
    group_store = c10::make_intrusive<c10d::PrefixStore>(
        "hlm-token-" + hex64(fnv1a64(std::string("hlm rendezvous ") + token)), group_store);
  group_store->set("hlm/arrived/" + std::to_string(env.rank), std::vector<uint8_t>{1});
  if (env.rank == 0) wait_for_every_rank(*group_store, env, timeout_seconds);
  backend = plugins.create<Backend>("backend", job.at("backend").at("plugin"), job.at("backend"));
  return backend->create_group(group_store, env.rank, env.world_size);
}

uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return uint64_t(usage.ru_maxrss) * 1024;
}

}  // namespace

std::string stopped_marker(const std::string& out_dir, int rank) {
  return out_dir + "/stopped_by_signal.rank" + std::to_string(rank);
}

namespace {

std::vector<std::filesystem::path> stop_markers(const std::string& out_dir) {
  std::vector<std::filesystem::path> markers;
  std::error_code ec;  // no folder yet: no markers
  for (const auto& entry : std::filesystem::directory_iterator(out_dir, ec))
    if (entry.path().filename().string().rfind("stopped_by_signal.rank", 0) == 0)
      markers.push_back(entry.path());
  return markers;
}

}  // namespace

bool any_rank_stopped_by_signal(const std::string& out_dir) {
  return !stop_markers(out_dir).empty();
}

void clear_stop_markers(const std::string& out_dir) {
  std::error_code ec;
  for (const auto& marker : stop_markers(out_dir)) std::filesystem::remove(marker, ec);
}

nlohmann::json run_rank_job(const nlohmann::json& job, const PluginHost& plugins,
                            const DistEnv& env) {
  TrainJob train;
  train.options = TrainOptions::from_params(job.at("options"));
  // A masked model (bert) declares its masking rate among its own parameters.
  train.options.mask_probability = job.at("model").value("mask_probability", 0.15);
  const std::string job_dir = job.at("out_dir");  // results and stop markers of every rank
  train.out_dir = job_dir;
  train.env = env;
  // Independent ranks train alone, side by side: what the host allows N ranks without any
  // communication (scale-analysis's ceiling).
  const bool independent = job.value("independent", false);
  if (independent) {
    train.env = DistEnv{};
    train.out_dir += "/rank" + std::to_string(env.rank);
  }
  // Before any compute thread starts, so that LibTorch's pool inherits the cores. Planned on
  // the launcher's layout, so that independent ranks keep to the same cores as coupled ones.
  CoreBinding binding;
  if (train.options.bind_cores)
    binding = bind_rank_to_cores(env.local_rank, env.local_world_size, train.options.threads);
  if (env.local_world_size > 1) spdlog::info("rank {}: {}", env.rank, binding.reason);
  set_compute_threads(train.options.threads);
  const std::string stage = job.value("stage", "pretrain");
  train.stage = stage;
  train.device = rank_device(train.options.device, env.local_rank, stage);
  // CPU energy is the node's, shared by its ranks; a GPU's energy is its rank's.
  const int nvml_index = nvml_index_of(train.device, std::getenv("CUDA_VISIBLE_DEVICES"));
  metrics().set_energy_share(std::max(1, env.local_world_size), nvml_index);
  GpuUsage gpu_usage(train.device, nvml_index, energy_sources().nvml());
  std::shared_ptr<Backend> backend;
  if (train.env.distributed()) train.group = make_group(job, plugins, env, backend);
  nlohmann::json fabric;
  if (train.group && job.value("probe_fabric", false))
    fabric = probe_fabric(train.group, train.device);

  torch::manual_seed(train.options.seed);  // same initial weights everywhere (then broadcast)
  auto model = plugins.create<Model>("model", job.at("model").at("plugin"), job.at("model"));
  // One store, or several (token_stores, with store_weights: a foundation's beat and rhythm
  // tokens).
  std::vector<TokenStore> stores;
  for (const auto& path : job.contains("token_stores")
                              ? job.at("token_stores")
                              : nlohmann::json::array({job.at("token_store")}))
    stores.push_back(TokenStore::open(path.get<std::string>()));
  std::vector<const TokenStore*> store_list;
  for (const TokenStore& s : stores) store_list.push_back(&s);
  train.store_weights = job.value("store_weights", std::vector<double>());
  const int64_t log_every = std::max<int64_t>(1, train.options.log_every);
  train.on_step = [&](const TrainStep& s) {
    const bool logged = s.step % log_every == 0 || s.step == train.options.steps;
    metrics().train_step(stage, s, logged);
    gpu_usage.after_step(s.rank_samples);
    if (env.rank == 0 && logged)
      spdlog::info("[{}] step {}/{} loss {:.4f} lr {:.2e} {:.0f} tok/s", stage, s.step,
                   train.options.steps, s.loss, s.learning_rate,
                   double(s.rank_tokens * train.env.world_size) / s.step_seconds);
  };
  train.on_checkpoint = [&](double seconds) { metrics().checkpoint_written(stage, seconds); };
  // What this rank is doing, for the launching process's stall watcher (stall_watcher.h).
  std::unique_ptr<HeartbeatWriter> heartbeat;
  if (env.distributed()) {
    std::filesystem::create_directories(job_dir);
    // Started by srun, the launching process may be on another node: it reads copies.
    const char* copy_every = std::getenv("HLM_HEARTBEAT_COPY_SECONDS");
    heartbeat =
        std::make_unique<HeartbeatWriter>(job_dir + "/heartbeat.rank" + std::to_string(env.rank),
                                          copy_every != nullptr ? std::atof(copy_every) : 0.0);
    train.on_activity = [&](RankActivity activity) { heartbeat->enter(activity); };
    const auto log_step = train.on_step;
    train.on_step = [&, log_step](const TrainStep& s) {
      heartbeat->step_finished(uint64_t(s.step));
      log_step(s);
    };
  }
  if (env.distributed())
    spdlog::info("rank {} of {} on {} ({}), master {}:{}", env.rank, env.world_size, node_name(),
                 local_address_towards(env.master_addr, env.master_port), env.master_addr,
                 env.master_port);
  TrainResult r;
  // However training ends, the age of its last checkpoint stops meaning work at risk.
  struct CheckpointAgeEnds {
    const std::string& stage;
    ~CheckpointAgeEnds() { metrics().training_finished(stage); }
  } checkpoint_age_ends{stage};
  try {
    r = train_language_model(*model, store_list, train);
  } catch (const Preempted&) {
    // Every rank stopped after the same checkpoint; a launcher that sees only a failed step
    // (srun) tells a stop from a failure by this file.
    write_file_atomic(stopped_marker(job_dir, env.rank), utc_timestamp() + "\n");
    throw;
  } catch (const c10::OutOfMemoryError& e) {
    throw Error(out_of_memory_message(stage, train.options.batch, model->context(), train.device,
                                      e.what_without_backtrace()));
  }
  nlohmann::json result = {
      {"rank", env.rank},
      {"device", train.device.str()},
      {"world_size", r.world_size},
      {"steps", r.steps},
      {"losses", r.losses},
      {"loss_first", r.losses.empty() ? 0.0 : r.losses.front()},
      {"loss_last", r.losses.empty() ? 0.0 : r.losses.back()},
      {"skipped_steps", r.skipped_steps},
      {"eval_loss", r.eval_loss},
      {"eval_loss_by_store", r.eval_loss_by_store},
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
      {"gradient_bytes", r.gradient_bytes},
      {"gradient_buckets", r.gradient_buckets},
      {"step_without_allreduce_quantiles", r.step_without_allreduce_quantiles},
      {"backward_overlap", r.backward_overlap},
      {"tokens_per_rank_step", train.options.batch * train.options.accumulation * model->context()},
      {"checkpoint", r.checkpoint},
      {"peak_rss_bytes", peak_rss_bytes()},
      {"bound_cpus", binding.cpus}};
  if (!fabric.is_null()) result["fabric_probe"] = fabric;
  if (const auto gpu = gpu_usage.summary(); !gpu.is_null()) result["gpu"] = gpu;
  metrics().eval_loss(stage, r.eval_loss, uint64_t(r.steps));
  std::filesystem::create_directories(job_dir);
  write_file_atomic(job_dir + "/result_rank" + std::to_string(env.rank) + ".json", result.dump(2));
  return result;
}

double slowest_independent_tokens_per_s(const std::string& out_dir, int world) {
  double slowest = 0;
  for (int r = 0; r < world; ++r) {
    const auto result = read_json(out_dir + "/result_rank" + std::to_string(r) + ".json");
    if (!result) throw InternalError("{}: rank {} left no result", out_dir, r);
    const double t = result->at("tokens_per_s");
    slowest = r == 0 ? t : std::min(slowest, t);
  }
  return slowest;
}

}  // namespace hlm
