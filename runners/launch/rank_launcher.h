// The choice of how a training stage starts its rank processes, made once per `hlm run`
// (--launcher) and handed to every stage.
#pragma once
#include <string>

namespace hlm {

// How run_job_on_ranks starts the rank processes of a job.
struct RankLauncher {
  enum class Kind {
    local,     // processes on this host (the multiproc runner)
    srun,      // one srun job step across the SLURM allocation this process runs in
    job_file,  // none: write the job file for another launcher (torchrun, srun) and stop
  };
  Kind kind = Kind::local;
  std::string container;  // srun: the ranks run in this Apptainer image
  bool gpus = false;      // srun: with the host's GPUs (apptainer --nv)
  int nodes = 0;          // srun: spread the ranks evenly over this many nodes (0: as srun does)
  // local: a rank that finished no step for this long is reported as stalled (0 = never);
  // the workflow's settings.stall_seconds.
  double stall_seconds = 0;
  // How long ranks wait for each other at the rendezvous (settings.rendezvous_timeout_seconds).
  double rendezvous_timeout_seconds = 300;

  // "local", "srun" or "job-file"; throws ConfigError naming the others.
  static Kind parse(const std::string& name);
};

}  // namespace hlm
