// The runner block's keys and their checks (see runner_params.h).
#include "workflow/runner_params.h"

namespace hlm::workflow {

std::vector<ParamSpec> runner_param_specs() {
  return {
      {"kind", "string", "\"local\"", "local (this host) or slurm (an sbatch job)", false},
      {"nodes", "int", "1", "slurm: nodes of the allocation", false},
      {"ntasks_per_node", "int", "1", "slurm: training ranks per node", false},
      {"gpus_per_node", "int", "0", "slurm: GPUs per node (0 asks for none)", false},
      {"cpus_per_task", "int", "0", "slurm: CPUs per rank (0 leaves SLURM's default)", false},
      {"time", "string", "\"\"", "slurm: time limit, e.g. 02:00:00 (\"\" = the partition's)",
       false},
      {"partition", "string", "\"\"", "slurm: partition (\"\" = the default one)", false},
      {"account", "string", "\"\"", "slurm: account to charge (\"\" = the user's default)", false},
      {"sbatch", "list:string", "[]", "slurm: extra sbatch options, one per #SBATCH line", false},
      {"signal_seconds", "int", "120",
       "slurm: ranks get USR1 this long before the time limit, checkpoint and requeue", false},
      {"requeue", "bool", "true", "slurm: requeue the job after a USR1 stop or a node failure",
       false},
      {"container", "string", "\"\"",
       "slurm: Apptainer image the ranks run in (apptainer exec; --nv with GPUs)", false},
      {"hlm", "string", "\"\"", "slurm: the hlm executable on the nodes (\"\" = this one)", false},
  };
}

std::string runner_problem(const nlohmann::json& runner) {
  const std::string kind = runner.at("kind");
  if (kind != "local" && kind != "slurm")
    return "kind '" + kind + "' is not a runner (local or slurm)";
  for (const char* key : {"nodes", "ntasks_per_node"})
    if (runner.at(key).get<long long>() < 1) return std::string(key) + " must be at least 1";
  for (const char* key : {"gpus_per_node", "cpus_per_task", "signal_seconds"})
    if (runner.at(key).get<long long>() < 0) return std::string(key) + " cannot be negative";
  for (const char* key : {"time", "partition", "account", "container", "hlm"})
    if (runner.at(key).get<std::string>().find_first_of(" \t\r\n") != std::string::npos)
      return std::string(key) + " '" + runner.at(key).get<std::string>() +
             "' cannot contain spaces (it becomes one word of the batch script)";
  // The one program a workflow may name is hlm itself, installed elsewhere on the nodes: any
  // other file would make the workflow a way to run arbitrary programs.
  if (const std::string hlm = runner.at("hlm"); !hlm.empty()) {
    const size_t slash = hlm.rfind('/');
    if (hlm.substr(slash == std::string::npos ? 0 : slash + 1) != "hlm")
      return "hlm '" + hlm + "' must name an executable called hlm (the hlm binary on the nodes)";
  }
  for (const auto& line : runner.at("sbatch"))
    if (line.get<std::string>().find('\n') != std::string::npos)
      return "an sbatch option cannot span lines: '" + line.get<std::string>() + "'";
  return "";
}

}  // namespace hlm::workflow
