// Writing the batch script (see sbatch_script.h).
#include "slurm/sbatch_script.h"

#include <sstream>

namespace hlm {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string sbatch_script(const BatchJob& job) {
  const nlohmann::json& r = job.runner;
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by hlm submit for workflow '" << job.workflow_name << "'.\n"
    << "# hlm status " << job.run_dir << " shows the job's state and its last step.\n"
    << "#SBATCH --job-name=hlm-" << job.workflow_name << "\n"
    << "#SBATCH --nodes=" << r.at("nodes").get<int>() << "\n"
    << "#SBATCH --ntasks-per-node=" << r.at("ntasks_per_node").get<int>() << "\n";
  if (const int gpus = r.at("gpus_per_node"); gpus > 0)
    s << "#SBATCH --gpus-per-node=" << gpus << "\n";
  if (const int cpus = r.at("cpus_per_task"); cpus > 0)
    s << "#SBATCH --cpus-per-task=" << cpus << "\n";
  for (const char* key : {"time", "partition", "account"})
    if (const std::string value = r.at(key); !value.empty())
      s << "#SBATCH --" << key << "=" << value << "\n";
  // One output file across requeues: appended to, not overwritten by the next start.
  s << "#SBATCH --output=" << job.run_dir << "/slurm-%j.out\n"
    << "#SBATCH --open-mode=append\n";
  // USR1 reaches the srun tasks (the ranks), which checkpoint at their next step.
  if (const int seconds = r.at("signal_seconds"); seconds > 0)
    s << "#SBATCH --signal=USR1@" << seconds << "\n";
  const bool requeue = r.at("requeue");
  s << "#SBATCH " << (requeue ? "--requeue" : "--no-requeue") << "\n";
  for (const auto& line : r.at("sbatch")) s << "#SBATCH " << line.get<std::string>() << "\n";

  s << "\nset -u\n"
    << "echo \"hlm: job ${SLURM_JOB_ID} start ${SLURM_RESTART_COUNT:-0} on $(hostname), "
       "nodes ${SLURM_JOB_NODELIST}, at $(date -u +%Y-%m-%dT%H:%M:%SZ)\"\n"
    << shell_quote(job.hlm) << " run --resume " << shell_quote(job.run_dir) << " --runs-dir "
    << shell_quote(job.runs_dir) << " --launcher srun";
  if (const std::string image = r.at("container"); !image.empty()) {
    s << " --container " << shell_quote(image);
    if (r.at("gpus_per_node").get<int>() > 0) s << " --gpus";
  }
  s << "\nstatus=$?\n";
  if (requeue)
    s << "# 75: the ranks stopped on a signal after a checkpoint; the next start resumes there.\n"
      << "if [ \"$status\" -eq 75 ]; then\n"
      << "  echo \"hlm: stopped after a checkpoint; requeueing job ${SLURM_JOB_ID}\"\n"
      << "  scontrol requeue \"${SLURM_JOB_ID}\"\n"
      << "fi\n";
  s << "exit \"$status\"\n";
  return s.str();
}

}  // namespace hlm
