// The runner block's keys and their checks (see runner_params.h).
#include "workflow/runner_params.h"

namespace hlm::workflow {

namespace {

// Whether an sbatch option word names this option: "-o", "-ofile" (the value attached), or
// any prefix of the long name (getopt takes unambiguous abbreviations such as --out).
bool names(const std::string& option, const std::string& short_name, const std::string& long_name) {
  if (option.rfind("--", 0) == 0) return option.size() > 2 && long_name.rfind(option, 0) == 0;
  return !short_name.empty() && option.rfind(short_name, 0) == 0;
}

// hlm decides where the job's files go and what it runs: its output and error go to
// <run directory>/slurm-<job>.out, it starts in the directory hlm was submitted from, and its
// one command is the batch script. Options that would move those files elsewhere (anywhere
// the user can write), or run another command, are refused; "" for any other option.
std::string sbatch_option_refused(const std::string& line) {
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  const std::string option = line.substr(start, line.find_first_of(" \t=", start) - start);
  if (names(option, "-o", "--output") || names(option, "-e", "--error") ||
      names(option, "-i", "--input"))
    return "is set by hlm: the job's output goes to slurm-<job>.out in the run directory; "
           "remove it";
  if (names(option, "-D", "--chdir"))
    return "is set by hlm: the job starts where hlm submit ran; remove it";
  if (names(option, "", "--wrap")) return "would run a command of its own; remove it";
  return "";
}

}  // namespace

std::vector<ParamSpec> runner_param_specs() {
  return {
      {"kind", "string", "\"local\"", "local (this host) or slurm (an sbatch job)", false},
      {"nodes", "int[1,]", "1", "slurm: nodes of the allocation", false},
      {"ntasks_per_node", "int[1,]", "1", "slurm: training ranks per node", false},
      {"gpus_per_node", "int[0,]", "0", "slurm: GPUs per node (0 asks for none)", false},
      {"cpus_per_task", "int[0,]", "0", "slurm: CPUs per rank (0 leaves SLURM's default)", false},
      {"time", "string", "\"\"", "slurm: time limit, e.g. 02:00:00 (\"\" = the partition's)",
       false},
      {"partition", "string", "\"\"", "slurm: partition (\"\" = the default one)", false},
      {"account", "string", "\"\"", "slurm: account to charge (\"\" = the user's default)", false},
      {"sbatch", "list:string", "[]", "slurm: extra sbatch options, one per #SBATCH line", false},
      {"signal_seconds", "int[0,]", "120",
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
  for (const auto& entry : runner.at("sbatch")) {
    const std::string line = entry.get<std::string>();
    if (line.find('\n') != std::string::npos)
      return "an sbatch option cannot span lines: '" + line + "'";
    if (const std::string why = sbatch_option_refused(line); !why.empty())
      return "sbatch option '" + line + "' " + why;
  }
  return "";
}

}  // namespace hlm::workflow
