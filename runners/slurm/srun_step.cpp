// One srun job step for the training ranks (see srun_step.h).
#include "slurm/srun_step.h"

#include <csignal>
#include <fstream>
#include <memory>
#include <regex>

#include "multiproc/launcher.h"

namespace hlm {

std::vector<std::string> srun_command(const SrunStep& step) {
  std::vector<std::string> argv = {"srun",
                                   "--ntasks=" + std::to_string(step.ntasks),
                                   "--kill-on-bad-exit=1",
                                   "--label",
                                   "--unbuffered",
                                   "--export=ALL"};
  if (step.nodes > 0)
    argv.insert(argv.end(), {"--nodes=" + std::to_string(step.nodes),
                             "--ntasks-per-node=" + std::to_string(step.ntasks / step.nodes)});
  if (step.cpus_per_task > 0)
    argv.push_back("--cpus-per-task=" + std::to_string(step.cpus_per_task));
  if (!step.container.empty()) {
    argv.insert(argv.end(), {"apptainer", "exec"});
    if (step.gpus) argv.push_back("--nv");
    argv.push_back(step.container);
  }
  argv.insert(argv.end(), step.rank_argv.begin(), step.rank_argv.end());
  return argv;
}

std::string describe_srun_failure(const std::string& line) {
  static const std::regex failure(R"(srun: error: ([^:\s]+): tasks? ([0-9]+)[0-9,-]*: (.*))");
  std::smatch m;
  if (!std::regex_search(line, m, failure)) return "";
  return "rank " + m[2].str() + " on " + m[1].str() + ": " + m[3].str();
}

SrunOutcome run_srun_step(const SrunStep& step) {
  static const std::regex labelled(R"(^\s*([0-9]+): ?(.*)$)");
  std::map<int, std::unique_ptr<std::ofstream>> logs;
  auto log_for = [&](int rank) -> std::ofstream* {
    if (step.log_dir.empty()) return nullptr;
    auto& log = logs[rank];
    if (!log) {
      const std::string name = rank < 0 ? "srun.log" : "rank" + std::to_string(rank) + ".log";
      log = std::make_unique<std::ofstream>(step.log_dir + "/" + name, std::ios::app);
    }
    return log.get();
  };
  SrunOutcome outcome;
  LaunchOptions launch;
  launch.nproc = 1;
  launch.rank_variables = false;  // the tasks' layout comes from srun, not from this process
  launch.master_port = 1;  // any non-zero value: srun needs no port picked (MASTER_PORT is in env)
  launch.argv = srun_command(step);
  launch.env = step.env;
  launch.stop_requested = step.stop_requested;
  launch.on_poll = step.on_poll;
  launch.stop_signal = SIGUSR1;  // srun passes USR1 to the ranks, which checkpoint and exit
  launch.grace_seconds = 60;
  launch.on_line = [&](int, const std::string& line) {
    std::smatch m;
    const bool from_rank = std::regex_match(line, m, labelled);
    const int rank = from_rank ? std::stoi(m[1].str()) : -1;
    const std::string text = from_rank ? m[2].str() : line;
    if (auto* log = log_for(rank)) *log << text << '\n' << std::flush;
    if (!from_rank)
      if (std::string failure = describe_srun_failure(line); !failure.empty())
        outcome.task_failures.push_back(std::move(failure));
    if (step.on_line) step.on_line(rank, text);
  };
  const LaunchResult result = launch_ranks(launch);
  outcome.exit_code = result.exit_codes.at(0);
  return outcome;
}

}  // namespace hlm
