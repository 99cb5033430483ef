// The batch script `hlm submit` writes into a run directory: #SBATCH lines from the workflow's
// runner block, then `hlm run --resume RUN_DIR --launcher srun` on the batch host. Training
// ranks start as one srun step; the other stages run once, in the batch script's process.
// A USR1 before the time limit (or a preemption) makes the ranks checkpoint and exit with 75;
// the script then requeues the job, and its next start resumes from that checkpoint.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace hlm {

struct BatchJob {
  std::string workflow_name;
  std::string run_dir;    // absolute
  std::string runs_dir;   // absolute: its cache index serves the job's stages
  std::string hlm;        // the hlm executable on the nodes
  nlohmann::json runner;  // the workflow's typed runner block
};

std::string sbatch_script(const BatchJob& job);

// A word the shell reads back as `text` ('...' with embedded quotes escaped).
std::string shell_quote(const std::string& text);

}  // namespace hlm
