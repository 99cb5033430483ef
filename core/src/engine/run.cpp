// The stage engine (see run.h).
#include "engine/run.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "distributed/preemption.h"
#include "engine/cache_key.h"
#include "engine/run_directory.h"
#include "engine/stage.h"
#include "hlm/errors.h"
#include "hlm/util.h"
#include "metrics/energy.h"
#include "metrics/metrics.h"
#include "util/atomic_file.h"
#include "util/error_text.h"
#include "util/run_lock.h"

namespace fs = std::filesystem;

namespace hlm {

workflow::Schema build_schema(const PluginHost& plugins) {
  workflow::Schema schema;
  for (const auto& kind : stage_kinds()) schema.add_stage_kind(kind.kind, kind.params);
  for (const auto& [key, info] : plugins.plugins()) {
    std::vector<workflow::ParamSpec> params;
    for (const auto& decl : info.params) params.push_back(workflow::from_decl(decl));
    schema.add_plugin(info.kind, info.name, params);
  }
  for (const auto& refused : plugins.refused()) schema.add_refused_library(refused.reason);
  return schema;
}

std::string resolve_runs_dir(const workflow::Workflow& wf, const std::string& runs_dir) {
  const std::string dir =
      !runs_dir.empty() ? runs_dir : wf.settings.value("runs_dir", std::string("runs"));
  return fs::absolute(dir).lexically_normal().string();
}

namespace {

// The run log's file alone, for what the console should not show (backtraces).
std::shared_ptr<spdlog::sinks::sink> g_log_file;

void start_logging(const std::string& run_dir) {
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(run_dir + "/hlm.log");
  g_log_file = file;
  console->set_pattern("%^%v%$");
  file->set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] %v");
  auto logger = std::make_shared<spdlog::logger>("hlm", spdlog::sinks_init_list{console, file});
  // A log that cannot be written (disk full) must not end a run that can still save its
  // work: said once on stderr, with the file; the console keeps every line.
  logger->set_error_handler([path = run_dir + "/hlm.log"](const std::string& why) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      std::fprintf(stderr,
                   "warning: cannot write the run log %s (%s); the run goes on, and log lines "
                   "are missing from that file until space is freed\n",
                   path.c_str(), why.c_str());
  });
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void log_to_file_only(const std::string& text) {
  if (!g_log_file) return;
  g_log_file->log(spdlog::details::log_msg("hlm", spdlog::level::err, text));
  g_log_file->flush();
}

// A stage's error in one line; LibTorch's backtrace goes to hlm.log alone, and the message
// names the parameters that most likely set what failed.
std::string stage_error(const std::string& stage, const std::exception& e) {
  const std::string what = e.what();
  if (!has_backtrace(what)) return what;
  log_to_file_only("stage '" + stage + "' failed inside LibTorch:\n" + what);
  const std::string parameters = likely_parameters(what);
  return "LibTorch: " + error_summary(what) +
         (parameters.empty() ? "" : " (check the stage's " + parameters + ")") +
         " (backtrace in hlm.log)";
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}

std::string report(const workflow::Workflow& wf, const std::string& run_dir,
                   const std::vector<nlohmann::json>& manifests) {
  std::string md = "# " + wf.name + "\n\nRun directory: `" + run_dir + "`\n\n" +
                   "| stage | kind | status | seconds |\n|---|---|---|---|\n";
  for (const auto& m : manifests) {
    char row[256];
    std::snprintf(row, sizeof(row), "| %s | %s | %s | %.2f |\n", m.value("id", "").c_str(),
                  m.value("kind", "").c_str(),
                  m.contains("reused_from") ? "cached" : m.value("status", "").c_str(),
                  m.value("seconds", 0.0));
    md += row;
  }
  for (const auto& stage : wf.left_out)
    md += "| " + stage.id + " | | left out: " + stage.reason + " | |\n";
  md += "\nEnergy: " + energy_sources().describe() + ".\n";
  for (const auto& m : manifests)
    md += "\n## " + m.value("id", "") + " (" + m.value("kind", "") + ")\n\n" +
          m.value("report_md", "") + "\n";
  return md;
}

}  // namespace

std::string start_run_directory(const workflow::Workflow& wf, const std::string& runs_dir,
                                const std::vector<std::string>& overrides) {
  const std::string resolved = wf.resolved_yaml();
  const std::string run_dir = new_run_directory(runs_dir, wf.name, resolved + utc_timestamp());
  write_file_atomic(run_dir + "/workflow.resolved.yaml", resolved);
  std::string lines;
  for (const auto& o : overrides) lines += o + "\n";
  write_file_atomic(run_dir + "/overrides.txt", lines);
  const std::string source =
      wf.file.empty() ? "" : fs::absolute(wf.file).lexically_normal().string();
  write_file_atomic(run_dir + "/run.json",
                    nlohmann::json{{"runs_dir", runs_dir}, {"workflow", source}}.dump(2) + "\n");
  return run_dir;
}

std::string runs_dir_of_run(const std::string& run_dir) {
  if (const auto recorded = read_json(run_dir + "/run.json"))
    if (recorded->contains("runs_dir") && (*recorded)["runs_dir"].is_string())
      return (*recorded)["runs_dir"].get<std::string>();
  // A run made before run.json: runs/<workflow>/<run>.
  return fs::absolute(run_dir).lexically_normal().parent_path().parent_path().string();
}

namespace {

// Longer than an NFSv4 lease (90 s by default), after which the server drops a dead client's
// locks.
constexpr double kRequeuedLockWaitSeconds = 180;

// `hlm run` of the workflow and overrides that made run_dir, as its run.json and overrides.txt
// recorded them.
std::string rerun_command(const std::string& run_dir) {
  const auto recorded = read_json(run_dir + "/run.json");
  std::string command = "hlm run " + (recorded ? recorded->value("workflow", "") : "");
  if (!recorded || recorded->value("workflow", "").empty()) command += "WORKFLOW.yaml";
  std::ifstream overrides(run_dir + "/overrides.txt");
  for (std::string line; std::getline(overrides, line);)
    if (!line.empty()) command += " '" + line + "'";
  return command;
}

// The run folder to work in, locked for this process: a new one, or the one resumed, whose
// stage cache is the runs folder it was made in, wherever hlm runs from.
std::pair<std::string, std::string> open_run(const workflow::Workflow& wf,
                                             const RunOptions& options) {
  if (options.resume_dir.empty()) {
    const std::string runs_dir = resolve_runs_dir(wf, options.runs_dir);
    const std::string run_dir = start_run_directory(wf, runs_dir, options.overrides);
    lock_run_directory(run_dir);
    return {run_dir, runs_dir};
  }
  const std::string run_dir = fs::absolute(options.resume_dir).lexically_normal().string();
  // A SLURM job (re)starting the run may find the lock of its previous allocation's dead node
  // still held by the shared file system for a while: it waits, where a user is told at once.
  lock_run_directory(
      run_dir, options.launcher.kind == RankLauncher::Kind::srun ? kRequeuedLockWaitSeconds : 0.0);
  const std::string runs_dir = runs_dir_of_run(run_dir);
  if (!options.runs_dir.empty() && resolve_runs_dir(wf, options.runs_dir) != runs_dir)
    throw ConfigError(
        "--runs-dir {}: the run {} belongs to the runs folder {} (its stage cache); resume it "
        "without --runs-dir",
        options.runs_dir, run_dir, runs_dir);
  return {run_dir, runs_dir};
}

}  // namespace

std::string run_workflow(const workflow::Workflow& wf, const PluginHost& plugins,
                         const RunOptions& options) {
  // What the stages fix between them (a segment within the model's context), and what this
  // machine must offer (a GPU asked for), are checked before a run folder is made.
  check_plan(wf);
  for (const auto& instance : wf.stages)
    if (const auto& preflight = stage_kind(instance.kind).preflight) preflight(instance);
  // What the stages read from outside the run (their datasets, the foundation a `from` or
  // codebook_from names) is looked up once here too, so a wrong path is refused before the
  // stages before it have run; each stage looks again for its cache key when it starts.
  for (const auto& instance : wf.stages) stage_external_inputs(instance, plugins);
  const auto [run_dir, runs_dir] = open_run(wf, options);
  start_logging(run_dir);
  metrics().set_labels(fs::path(run_dir).filename().string(), 0);
  metrics().open_jsonl(run_dir + "/metrics.jsonl");
  const int port =
      options.metrics_port >= 0 ? options.metrics_port : wf.settings.value("metrics_port", 0);
  const int bound = metrics().start_exposer(port, wf.settings.value("metrics_bind", "127.0.0.1"));
  metrics().publish_target(runs_dir + "/targets", fs::path(run_dir).filename().string(),
                           {{"workflow", wf.name}, {"node", node_name()}});
  const WithdrawTargetAtScopeExit withdraw_target;
  spdlog::info("hlm {}: workflow '{}', run directory {}", HLM_VERSION, wf.name, run_dir);
  spdlog::info("metrics: http://{}/metrics", scrape_address(metrics().bind_address(), bound));
  spdlog::info("energy: {}", energy_sources().describe());
  for (const auto& stage : wf.left_out) spdlog::info("left out: {} ({})", stage.id, stage.reason);

  std::map<std::string, std::string> keys;
  std::map<std::string, nlohmann::json> manifests;
  std::vector<nlohmann::json> ordered;
  const size_t total = wf.stages.size();
  for (size_t i = 0; i < total; ++i) {
    const auto& instance = wf.stages[i];
    const CacheKey cache_key = stage_cache_key(instance, keys, plugins);
    const std::string& key = cache_key.key;
    keys[instance.id] = key;
    const std::string stage_dir = run_dir + "/" + instance.id;
    const std::string tag =
        "[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + instance.id;
    fs::create_directories(stage_dir);
    auto previous = read_manifest(stage_dir);
    std::optional<std::string> cached;
    if (previous && previous->value("status", "") == "done" &&
        previous->value("cache_key", "") == key)
      cached = stage_dir;  // resuming: this run already finished it
    else
      cached = cached_stage_dir(runs_dir, key);
    if (cached) {
      // Resuming, the stage's own manifest (read above) already says it all.
      nlohmann::json m = *cached == stage_dir ? *previous : *read_manifest(*cached);
      if (*cached != stage_dir) {
        m["reused_from"] = *cached;
        write_manifest(stage_dir, m);
      }
      spdlog::info("{}: reused from cache ({})", tag, *cached);
      metrics().stage_status(instance.id, "cached");
      manifests[instance.id] = m;
      ordered.push_back(m);
      continue;
    }
    if (previous && previous->value("cache_key", "") != key) {
      // Partial outputs of an interrupted run whose inputs have changed since (records
      // edited, another build): resuming from them would mix the two, so they are set aside.
      const std::string aside =
          stage_dir + ".superseded-" + previous->value("cache_key", "unknown");
      fs::rename(stage_dir, aside);
      fs::create_directories(stage_dir);
      spdlog::warn("{}: its inputs changed since it was interrupted; earlier outputs moved to {}",
                   tag, aside);
    }
    if (stop_signal_received())  // a signal during a stage too short to check for it
      throw Preempted("stopped by a signal before stage '{}'; continue with hlm run --resume {}",
                      instance.id, run_dir);
    nlohmann::json m = {{"id", instance.id},
                        {"kind", instance.kind},
                        {"cache_key", key},
                        {"cache_parts", cache_key.parts},
                        {"params", instance.params},
                        {"needs", instance.needs},
                        {"matrix", instance.matrix_values},
                        {"status", "running"},
                        {"started_at", utc_timestamp()}};
    write_manifest(stage_dir, m);
    spdlog::info("{} ({}) ...", tag, instance.kind);
    metrics().stage_status(instance.id, "running");
    StageContext ctx{instance, wf, plugins, run_dir, stage_dir, {}, nullptr, options.launcher};
    ctx.launcher.stall_seconds = wf.settings.value("stall_seconds", 300.0);
    ctx.launcher.rendezvous_timeout_seconds =
        wf.settings.value("rendezvous_timeout_seconds", 300.0);
    for (const auto& need : instance.needs) ctx.inputs[need] = manifests.at(need);
    ctx.progress = [&](const std::string& line) { spdlog::info("{}: {}", tag, line); };
    const double start = now_seconds();
    try {
      StageOutput out = stage_kind(instance.kind).run(ctx);
      m["artifacts"] = out.artifacts;
      m["results"] = out.results;
      m["report_md"] = out.report_md;
      m["status"] = "done";
    } catch (const Preempted& e) {
      m["status"] = "interrupted";
      m["error"] = e.what();
      m["finished_at"] = utc_timestamp();
      write_manifest(stage_dir, m);
      metrics().stage_status(instance.id, "interrupted");
      throw;
    } catch (const std::exception& e) {
      m["status"] = "failed";
      m["error"] = stage_error(instance.id, e);
    }
    const double seconds = now_seconds() - start;
    m["finished_at"] = utc_timestamp();
    m["seconds"] = seconds;
    write_manifest(stage_dir, m);
    metrics().stage_finished(instance.id, seconds);
    metrics().stage_status(instance.id, m["status"].get<std::string>());
    if (m["status"] != "done") {
      spdlog::error("{} failed after {}: {}", tag, format_seconds(seconds),
                    m["error"].get<std::string>());
      throw Error(
          "stage '{}' failed. If the cause is outside the workflow (data, disk, this machine), "
          "fix it and continue with: hlm run --resume {}. If it is in the workflow or its "
          "overrides, change them and start a new run: {} (changed as needed); the stages it "
          "shares with this run are reused from the stage cache",
          instance.id, run_dir, rerun_command(run_dir));
    }
    remember_stage(runs_dir, key, stage_dir);
    spdlog::info("{} done in {}", tag, format_seconds(seconds));
    manifests[instance.id] = m;
    ordered.push_back(m);
  }
  write_file_atomic(run_dir + "/report.md", report(wf, run_dir, ordered));
  spdlog::info("report: {}/report.md", run_dir);
  metrics().close_jsonl();
  return run_dir;
}

}  // namespace hlm
