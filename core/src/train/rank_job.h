// A training job for one rank, described as JSON so the same job runs in-process (world size
// 1) or in rank processes started by a runner (`hlm rank JOB.json`).
//   {"model": {plugin block}, "backend": {plugin block}, "options": {TrainOptions params},
//    "token_store": path, "out_dir": path, "stage": id}
// Each rank writes out_dir/result_rank<r>.json; the return value is this rank's result.
#pragma once
#include <nlohmann/json.hpp>

#include "dist/dist_env.h"
#include "hlm/errors.h"
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

// Runs a job on `world_size` ranks: in this process when 1, else as rank processes of the
// hlm executable (the multiproc runner). Returns rank 0's result. Throws Error when a rank
// fails, naming the rank and its log.
nlohmann::json run_job_on_ranks(const nlohmann::json& job, int world_size,
                                const PluginHost& plugins,
                                const std::function<void(const std::string&)>& progress);

}  // namespace hlm
