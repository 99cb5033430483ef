// The training ranks as one SLURM job step: `srun --label ... hlm rank JOB` inside the
// allocation, started and watched like the multiproc runner's ranks (one process: srun),
// its labelled output split into one log per rank.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace hlm {

struct SrunStep {
  int ntasks = 1;
  int nodes = 0;  // > 0: srun --nodes, ntasks / nodes tasks on each (else srun's placement)
  int cpus_per_task =
      0;  // srun --cpus-per-task (SLURM 22.05's srun no longer reads it from sbatch)
  std::vector<std::string> rank_argv;      // what each task runs: hlm rank JOB
  std::string container;                   // run rank_argv in this Apptainer image
  bool gpus = false;                       // apptainer exec --nv
  std::map<std::string, std::string> env;  // exported to every task (srun --export=ALL)
  std::string log_dir;                     // rank<r>.log and srun.log here
  std::function<void(int rank, const std::string& line)> on_line;  // rank -1: srun's own
  std::function<bool()> stop_requested;  // as in LaunchOptions: forwarded as SIGTERM
  std::function<void()> on_poll;         // as in LaunchOptions: called while srun runs
};

struct SrunOutcome {
  int exit_code = 0;
  // One entry per task srun reported as failed: "rank 1 on nodeB: Killed".
  std::vector<std::string> task_failures;
  bool ok() const { return exit_code == 0; }
};

// The srun command line: one task per rank across the allocation, output labelled by rank,
// every task stopped as soon as one fails.
std::vector<std::string> srun_command(const SrunStep& step);

// srun's report of a failed task ("srun: error: nodeB: task 1: Killed", or "tasks 0-1: ...")
// as "rank 1 on nodeB: Killed"; "" for any other line.
std::string describe_srun_failure(const std::string& line);

SrunOutcome run_srun_step(const SrunStep& step);

}  // namespace hlm
