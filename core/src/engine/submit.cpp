// Submitting a workflow to SLURM and reporting on it (see submit.h).
#include "engine/submit.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/run.h"
#include "engine/run_directory.h"
#include "engine/stage.h"
#include "hlm/errors.h"
#include "metrics/metrics.h"
#include "slurm/sbatch_script.h"
#include "slurm/slurm_commands.h"
#include "train/checkpoint.h"
#include "util/atomic_file.h"
#include "util/run_lock.h"

namespace fs = std::filesystem;

namespace hlm {

std::vector<std::string> world_size_overrides(const workflow::Workflow& wf, int world_size) {
  std::vector<std::string> out;
  for (const auto& stage : wf.stages)
    if (stage.kind == "pretrain" &&
        std::find(out.begin(), out.end(),
                  stage.base_id + ".world_size=" + std::to_string(world_size)) == out.end())
      out.push_back(stage.base_id + ".world_size=" + std::to_string(world_size));
  return out;
}

namespace {

// A stage that trains on GPUs needs a job that asks SLURM for them, and NCCL a GPU per rank
// (it refuses two ranks on one GPU). `auto` runs on the CPU where the job gets no GPU.
void check_gpus(const workflow::Workflow& wf) {
  const int gpus = wf.runner.at("gpus_per_node"), ranks = wf.runner.at("ntasks_per_node");
  for (const auto& stage : wf.stages) {
    const bool cuda = stage.params.value("device", "cpu") == "cuda";
    const auto backend = stage.params.value("backend", nlohmann::json::object());
    const bool nccl = backend.is_object() && backend.value("plugin", "") == "nccl";
    if ((cuda || nccl) && gpus == 0)
      throw ConfigError(
          "{}:{}: stage '{}' trains on GPUs ({}), but runner.gpus_per_node is 0, so the job "
          "would get none; set runner.gpus_per_node to the GPUs of a node",
          stage.file, stage.line, stage.id, cuda ? "device cuda" : "backend nccl");
    if (nccl && ranks > gpus)
      throw ConfigError(
          "{}:{}: stage '{}' all-reduces over NCCL, which needs a GPU per rank, but "
          "runner.ntasks_per_node {} is more than runner.gpus_per_node {}; lower "
          "ntasks_per_node or use backend gloo",
          stage.file, stage.line, stage.id, ranks, gpus);
  }
}

// What a job on several nodes cannot do with these settings, checked before anything is written.
void check_for_slurm(const workflow::Workflow& wf, const std::string& runs) {
  if (runs.find_first_of(" \t\n%") != std::string::npos)
    throw ConfigError(
        "runs directory '{}': sbatch's --output cannot name a path with spaces or '%'; give "
        "another --runs-dir (or settings.runs_dir)",
        runs);
  const std::string bind = wf.settings.value("metrics_bind", "127.0.0.1");
  const bool per_host =
      bind == "127.0.0.1" || bind == "::1" || bind == "localhost" || is_wildcard_address(bind);
  if (wf.runner.at("nodes").get<int>() > 1 && !per_host)
    throw ConfigError(
        "settings.metrics_bind={} is one host's address, but the job runs on {} nodes whose "
        "ranks each bind it; use 0.0.0.0 (each rank is published at its node's address)",
        bind, wf.runner.at("nodes").get<int>());
  check_gpus(wf);
  check_plan(wf);
}

}  // namespace

Submission submit_workflow(const workflow::Workflow& wf, const std::vector<std::string>& overrides,
                           const std::string& runs_dir, const std::string& hlm, bool dry_run) {
  Submission out;
  const std::string runs = resolve_runs_dir(wf, runs_dir);
  check_for_slurm(wf, runs);
  out.run_dir = start_run_directory(wf, runs, overrides);
  BatchJob job{wf.name, out.run_dir, runs, hlm, wf.runner};
  if (const std::string on_nodes = wf.runner.at("hlm"); !on_nodes.empty()) job.hlm = on_nodes;
  out.script = out.run_dir + "/job.sbatch";
  write_file_atomic(out.script, sbatch_script(job));
  if (dry_run) return out;
  const CommandOutput submitted = run_program({"sbatch", "--parsable", out.script});
  if (submitted.status != 0)
    throw Error(
        "sbatch {} failed (exit {}): {}; the run directory keeps the script: fix the runner "
        "block (or the cluster's limits) and submit again",
        out.script, submitted.status, submitted.output);
  // --parsable prints "JOBID" or "JOBID;CLUSTER".
  std::istringstream first_line(submitted.output);
  std::getline(first_line, out.job_id);
  out.job_id = out.job_id.substr(0, out.job_id.find(';'));
  write_file_atomic(
      out.run_dir + "/slurm_job.json",
      nlohmann::json{
          {"job_id", out.job_id}, {"script", out.script}, {"submitted_at", utc_timestamp()}}
          .dump(2));
  return out;
}

namespace {

// "JobState=RUNNING" style fields of `scontrol show job -o ID`.
std::map<std::string, std::string> scontrol_fields(const std::string& job_id) {
  std::map<std::string, std::string> fields;
  const CommandOutput shown = run_program({"scontrol", "show", "job", "-o", job_id});
  if (shown.status != 0) return fields;
  std::istringstream words(shown.output);
  for (std::string word; words >> word;)
    if (const size_t eq = word.find('='); eq != std::string::npos)
      fields[word.substr(0, eq)] = word.substr(eq + 1);
  return fields;
}

// The step of the last line of a rank's metrics log that has one.
int64_t last_logged_step(const std::string& jsonl) {
  std::ifstream in(jsonl);
  int64_t step = -1;
  for (std::string line; std::getline(in, line);) {
    const auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.contains("step") && record["step"].is_number_integer())
      step = record["step"].get<int64_t>();
  }
  return step;
}

// Who works in the run now, from its lock (util/run_lock.h).
std::string run_state(const RunLockHolder& holder) {
  if (!holder.locked) return "not running (no process holds the run)";
  if (holder.pid <= 0) return "running (its lock is held)";
  const std::string who = "hlm PID " + std::to_string(holder.pid) + " on " + holder.host;
  return holder.pid_alive || !holder.on_this_host
             ? "running (" + who + ")"
             : "stopping (" + who + " has ended; ranks it started still run)";
}

}  // namespace

std::string run_status(const std::string& run_dir) {
  check_run_directory(run_dir);
  std::ostringstream s;
  const std::string absolute = fs::absolute(run_dir).lexically_normal().string();
  s << "run    " << absolute << "\n";
  const RunLockHolder holder = run_lock_holder(run_dir);
  s << "state  " << run_state(holder) << "\n";
  bool slurm_job_running = false;  // its lock is on a compute node: the job's state tells
  if (const auto job = read_json(run_dir + "/slurm_job.json")) {
    const std::string id = job->value("job_id", "");
    const auto fields = scontrol_fields(id);
    slurm_job_running = fields.count("JobState") && fields.at("JobState") == "RUNNING";
    if (!fields.count("JobState"))
      s << "job    " << id << ": unknown to scontrol (finished longer ago than MinJobAge, or "
        << "another cluster)\n";
    else
      s << "job    " << id << ": " << fields.at("JobState") << ", nodes "
        << (fields.count("NodeList") ? fields.at("NodeList") : "?") << ", restarts "
        << (fields.count("Restarts") ? fields.at("Restarts") : "0") << "\n";
  } else {
    s << "job    not submitted to SLURM\n";
  }
  std::vector<fs::path> stages;
  for (const auto& entry : fs::directory_iterator(run_dir))
    if (entry.is_directory() && fs::exists(entry.path() / "manifest.json"))
      stages.push_back(entry.path());
  std::sort(stages.begin(), stages.end(), [](const fs::path& a, const fs::path& b) {
    return fs::last_write_time(a / "manifest.json") < fs::last_write_time(b / "manifest.json");
  });
  for (const auto& stage : stages) {
    std::optional<nlohmann::json> m;
    try {
      m = read_manifest(stage.string());
    } catch (const Error& e) {
      s << "stage  " << stage.filename().string() << ": " << e.what() << "\n";
      continue;
    }
    if (!m) continue;
    std::string status = m->value("status", "?");
    // A stage marked running in a run no process holds ended with its process (SIGKILL, a
    // crash, a lost node) before it could record that.
    if (status == "running" && !holder.locked && !slurm_job_running)
      status = "interrupted (its process ended without recording it; hlm run --resume " + absolute +
               " continues)";
    s << "stage  " << stage.filename().string() << ": " << status;
    if (m->value("kind", "") == "pretrain" || m->value("kind", "") == "finetune") {
      const int64_t steps = m->value("params", nlohmann::json::object()).value("steps", int64_t(0));
      const int64_t step = last_logged_step((stage / "metrics.rank0.jsonl").string());
      if (step >= 0) s << ", step " << step << " of " << steps;
      const std::string newest = latest_checkpoint((stage / "checkpoints").string());
      if (!newest.empty()) s << ", newest checkpoint " << fs::path(newest).filename().string();
    }
    s << "\n";
  }
  return s.str();
}

}  // namespace hlm
