// `hlm submit`: a run directory with the workflow and its batch script, handed to sbatch; and
// `hlm status RUN_DIR`: the job's state from scontrol and how far each stage got.
#pragma once
#include <string>
#include <vector>

#include "workflow/workflow.h"

namespace hlm {

struct Submission {
  std::string run_dir;
  std::string script;  // RUN_DIR/job.sbatch
  std::string job_id;  // "" for a dry run
};

// Creates the run directory, writes job.sbatch and submits it with sbatch (dry_run: submits
// nothing). The job id goes to RUN_DIR/slurm_job.json. Throws Error with sbatch's message
// when it refuses the job; the run directory then keeps the script for `sbatch` by hand.
Submission submit_workflow(const workflow::Workflow& workflow,
                           const std::vector<std::string>& overrides, const std::string& runs_dir,
                           const std::string& hlm, bool dry_run);

// The overrides that size every pretrain stage to the allocation (nodes x ntasks_per_node).
std::vector<std::string> world_size_overrides(const workflow::Workflow& workflow, int world_size);

// Lines for `hlm status RUN_DIR`: the SLURM job (id, state, nodes, restarts) and each stage's
// status, with the last step and newest checkpoint of training stages.
std::string run_status(const std::string& run_dir);

}  // namespace hlm
