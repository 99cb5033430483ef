// Starting a job's rank processes with the chosen launcher, restarting them after a failure
// and telling a stop on a signal from a failure (see rank_job.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "metrics/heartbeat.h"
#include "metrics/metrics.h"
#include "metrics/stall_watcher.h"
#include "multiproc/launcher.h"
#include "slurm/slurm_commands.h"
#include "slurm/srun_step.h"
#include "train/nonfinite_steps.h"
#include "train/rank_job.h"
#include "util/atomic_file.h"
#include "util/json_file.h"

namespace hlm {

namespace {

// One start of every rank: whether they all finished, stopped on a signal, or failed (where).
struct Attempt {
  bool ok = false;
  bool stopped = false;
  bool diverged = false;  // NaN or infinite steps: a restart would repeat them (kExitDiverged)
  std::string failure;
  std::set<int> stalled;  // ranks that made no step for stall_seconds at some point
};

struct RankCommand {
  std::vector<std::string> argv;  // hlm rank JOB
  std::map<std::string, std::string> env;
  std::string out_dir;
  int world_size = 1;
  std::function<void(const std::string&)> progress;
  std::string stage;
  double stall_seconds = 0;
};

// The last line of a rank's log that reports its error ("error: ..."), without the prefix.
std::string last_error_line(const std::string& log_path) {
  std::ifstream log(log_path);
  std::string line, last = "(no error line in the log)";
  while (std::getline(log, line))
    if (line.rfind("error: ", 0) == 0) last = line.substr(7);
  return last;
}

Attempt launch_on_this_host(const RankCommand& command) {
  LaunchOptions launch;
  launch.nproc = command.world_size;
  launch.argv = command.argv;
  launch.env = command.env;
  launch.log_dir = command.out_dir;
  launch.stop_requested = stop_signal_received;
  launch.on_line = [&](int rank, const std::string& line) {
    if (rank == 0 && command.progress) command.progress(line);
  };
  StallWatcher watcher(command.out_dir, command.world_size, command.stage, command.stall_seconds);
  launch.on_poll = [&] { watcher.check(); };
  const LaunchResult launched = launch_ranks(launch);
  if (launched.ok()) return {true, false, false, "", watcher.stalled_ranks()};
  const int code = launched.exit_codes[launched.failed_rank];
  // Ranks we forwarded a stop to may have died of it before their handler was installed:
  // still a stop, not a failure to restart.
  const bool stopped = code == kExitRequeue || stop_signal_received();
  const std::string log = command.out_dir + "/rank" + std::to_string(launched.failed_rank) + ".log";
  std::string failure = "rank " + std::to_string(launched.failed_rank) + " of " +
                        std::to_string(command.world_size) + " exited with " +
                        std::to_string(code) + "; see " + log;
  if (code == kExitDiverged) failure += ": " + last_error_line(log);
  return {false, stopped, code == kExitDiverged, failure, watcher.stalled_ranks()};
}

Attempt launch_srun_step(const RankCommand& command, const RankLauncher& launcher) {
  SrunStep step;
  step.ntasks = command.world_size;
  step.nodes = launcher.nodes;
  if (const char* cpus = std::getenv("SLURM_CPUS_PER_TASK")) step.cpus_per_task = std::atoi(cpus);
  step.rank_argv = command.argv;
  step.container = launcher.container;
  step.gpus = launcher.gpus;
  step.env = command.env;
  // Rank 0 runs on the allocation's first node: its store listens there, on the address
  // SLURM itself reaches that node on, unless the user named one.
  if (const char* addr = std::getenv("MASTER_ADDR"); addr && *addr)
    step.env["MASTER_ADDR"] = addr;
  else
    step.env["MASTER_ADDR"] = slurm_node_address(first_allocated_node());
  step.env["MASTER_PORT"] = std::to_string(free_tcp_port());
  step.log_dir = command.out_dir;
  step.stop_requested = stop_signal_received;
  // Ranks on other nodes are watched through the heartbeat copies they keep on the shared
  // filesystem, a tenth of stall_seconds apart (at least 0.25 s, at most 30 s).
  StallWatcher watcher(command.out_dir, command.world_size, command.stage, command.stall_seconds,
                       StallWatcher::Source::kCopies);
  if (command.stall_seconds > 0) {
    for (int r = 0; r < command.world_size; ++r) {  // an earlier start's copies
      std::error_code ec;
      std::filesystem::remove(
          heartbeat_copy_path(command.out_dir + "/heartbeat.rank" + std::to_string(r)), ec);
    }
    step.env["HLM_HEARTBEAT_COPY_SECONDS"] =
        std::to_string(std::clamp(command.stall_seconds / 10, 0.25, 30.0));
    step.on_poll = [&] { watcher.check(); };
  }
  step.on_line = [&](int rank, const std::string& line) {
    if (rank <= 0 && command.progress) command.progress(line);  // rank 0's, and srun's own
  };
  const SrunOutcome outcome = run_srun_step(step);
  if (outcome.ok()) return {true, false, false, "", watcher.stalled_ranks()};
  std::string failure = "srun exited with " + std::to_string(outcome.exit_code);
  for (const auto& task : outcome.task_failures) failure += "; " + task;
  failure += "; see " + command.out_dir + "/rank<r>.log and srun.log";
  const bool stopped = any_rank_stopped_by_signal(command.out_dir) ||
                       outcome.exit_code == kExitRequeue || stop_signal_received();
  return {false, stopped, outcome.exit_code == kExitDiverged, failure, watcher.stalled_ranks()};
}

// torchrun 1.13 under Python 3.11 (Debian 12) cannot parse its own defaults for --redirects
// and --tee ("'NoneType' object has no attribute 'get'"); 1 (stdout, also to the console)
// parses.
// The run directory a stage's job lies in: the nearest folder up with workflow.resolved.yaml.
std::string run_dir_of(const std::filesystem::path& job_path) {
  for (auto dir = job_path.parent_path(); dir.has_relative_path(); dir = dir.parent_path())
    if (std::filesystem::exists(dir / "workflow.resolved.yaml")) return dir.string();
  return "RUN_DIR";
}

std::string job_file_note(const std::string& job_path, int world_size, const std::string& hlm) {
  return "wrote " + job_path + " for " + std::to_string(world_size) +
         " ranks; start them with `torchrun --redirects=1 --tee=1 --no_python --nproc_per_node=" +
         std::to_string(world_size) + " " + hlm + " rank " + job_path +
         "` (or `srun --ntasks=" + std::to_string(world_size) + " " + hlm + " rank " + job_path +
         "` in an allocation), then continue with hlm run --resume " + run_dir_of(job_path);
}

}  // namespace

nlohmann::json run_job_on_ranks(const nlohmann::json& job, int world_size,
                                const PluginHost& plugins,
                                const std::function<void(const std::string&)>& progress,
                                const RankLauncher& launcher) {
  const std::string out_dir = job.at("out_dir");
  const std::string result_path = out_dir + "/result_rank0.json";
  // Ranks another launcher ran to the end (or a run stopped after they finished).
  if (const auto done = read_json(result_path);
      done && done->value("steps", int64_t(-1)) == job.at("options").value("steps", int64_t(-2))) {
    if (progress) progress("the ranks already finished this job: " + result_path);
    return *done;
  }
  if (world_size <= 1 && launcher.kind == RankLauncher::Kind::local)
    return run_rank_job(job, plugins, DistEnv{});
  std::filesystem::create_directories(out_dir);
  const std::string job_path = out_dir + "/job.json";
  nlohmann::json ranks_job = job;
  ranks_job["rendezvous_timeout_seconds"] = launcher.rendezvous_timeout_seconds;
  write_file_atomic(job_path, ranks_job.dump(2));
  const std::string hlm = std::filesystem::read_symlink("/proc/self/exe").string();
  if (launcher.kind == RankLauncher::Kind::job_file)
    throw JobFileWritten("{}", job_file_note(job_path, world_size, hlm));

  RankCommand command;
  // In an image the ranks run the image's own hlm (on its PATH), not this host's build.
  command.argv = {launcher.container.empty() ? hlm : "hlm", "rank", job_path};
  command.world_size = world_size;
  command.out_dir = out_dir;
  command.progress = progress;
  command.stage = job.value("stage", "pretrain");
  command.stall_seconds = launcher.stall_seconds;
  const int threads = job.at("options").value("threads", 1);
  command.env["OPENBLAS_NUM_THREADS"] = std::to_string(threads);
  command.env["OMP_NUM_THREADS"] = std::to_string(threads);
  // Each rank serves its own metrics and adds itself to the run's Prometheus targets.
  if (const std::string targets = metrics().targets_dir(); !targets.empty()) {
    command.env["HLM_METRICS_TARGETS"] = targets;
    command.env["HLM_METRICS_RUN"] = metrics().run_label();
    command.env["HLM_METRICS_BIND"] = metrics().bind_address();
  }
  // A failed group of ranks is restarted (resuming from the newest complete checkpoint) up to
  // max_restarts times. A stop signal is not a failure: it propagates.
  const int max_restarts = job.value("max_restarts", 0);
  std::set<int> stalled;
  for (int attempt = 0;; ++attempt) {
    clear_stop_markers(out_dir);
    const Attempt outcome = launcher.kind == RankLauncher::Kind::srun
                                ? launch_srun_step(command, launcher)
                                : launch_on_this_host(command);
    stalled.insert(outcome.stalled.begin(), outcome.stalled.end());
    if (outcome.ok) break;
    if (outcome.stopped)
      throw Preempted("stopped by a signal: {}; continue with hlm run --resume RUN_DIR",
                      outcome.failure);
    if (outcome.diverged) throw Diverged("{}", outcome.failure);
    if (attempt >= max_restarts) throw Error("{}", outcome.failure);
    if (progress)
      progress(outcome.failure + "; restarting the ranks from the newest checkpoint (restart " +
               std::to_string(attempt + 1) + " of " + std::to_string(max_restarts) + ")");
  }
  std::ifstream in(result_path);
  nlohmann::json result = nlohmann::json::parse(in);
  // Named in the stage's summary (manifest.json): which ranks stopped making steps for a
  // while, even when they went on afterwards.
  if (!stalled.empty()) result["stalled_ranks"] = stalled;
  return result;
}

}  // namespace hlm
