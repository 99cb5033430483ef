// A training job for one rank, described as JSON so the same job runs in-process (world size
// 1) or in rank processes started by a runner (`hlm rank JOB.json`).
//   {"model": {plugin block}, "backend": {plugin block}, "options": {TrainOptions params},
//    "token_store": path, "out_dir": path, "stage": id}; or "token_stores": [paths] and
//    "store_weights": [each one's share of the windows] (empty: by token count) for one model
//    on several stores.
// Each rank writes out_dir/result_rank<r>.json; the return value is this rank's result.
#pragma once
#include <nlohmann/json.hpp>

#include "distributed/dist_env.h"
#include "distributed/preemption.h"
#include "hlm/errors.h"
#include "launch/rank_launcher.h"
#include "plugin/plugin_host.h"

namespace hlm {

// Thrown on rank 0 when MASTER_PORT was taken before its store could listen on it; the rank
// exits with kExitAddressInUse and the launcher retries on another port.
class AddressInUse : public Error {
 public:
  using Error::Error;
};

nlohmann::json run_rank_job(const nlohmann::json& job, const PluginHost& plugins,
                            const DistEnv& env);

// A job run with "independent": true trains each rank alone, side by side with the others
// (what the host allows N ranks without communication); this is the slowest one's tokens/s,
// read from out_dir's result files. Throws InternalError when a rank left no result.
double slowest_independent_tokens_per_s(const std::string& out_dir, int world_size);

// Thrown by the job-file launcher once the job file is written: the run stops there (exit 0)
// and continues with `hlm run --resume RUN_DIR` after another launcher ran the ranks.
class JobFileWritten : public Preempted {
 public:
  using Preempted::Preempted;
};

// Runs a job on `world_size` ranks: in this process when 1 (local launcher), else as rank
// processes of the hlm executable started by the launcher. Returns rank 0's result. A job whose
// ranks already finished (result_rank0.json with every step) is not run again. Throws Error
// when the ranks fail, naming the rank (and node) and its log; Preempted when they stopped on
// a signal after a checkpoint.
nlohmann::json run_job_on_ranks(const nlohmann::json& job, int world_size,
                                const PluginHost& plugins,
                                const std::function<void(const std::string&)>& progress,
                                const RankLauncher& launcher = {});

// Each rank leaves stopped_by_signal.rank<r> in the job's out_dir when it stops on a signal
// after the checkpoint: what a launcher that sees only a failed srun step goes by (the first
// rank to exit may get the others killed before they write theirs).
std::string stopped_marker(const std::string& out_dir, int rank);
bool any_rank_stopped_by_signal(const std::string& out_dir);
void clear_stop_markers(const std::string& out_dir);

}  // namespace hlm
