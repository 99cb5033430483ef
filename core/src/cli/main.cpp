// The hlm command line: run / validate workflows, list plugins, and the internal `rank`
// entry point that the multiproc runner starts once per rank.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli/bench_gemm.h"
#include "cli/bench_pretrain.h"
#include "cli/bench_tokenize.h"
#include "cli/qrs_eval.h"
#include "distributed/dist_env.h"
#include "distributed/host_address.h"
#include "distributed/preemption.h"
#include "engine/cache_key.h"
#include "engine/run.h"
#include "engine/run_directory.h"
#include "engine/submit.h"
#include "hlm/errors.h"
#include "hlm/util.h"
#include "metrics/metrics.h"
#include "multiproc/launcher.h"
#include "plugin/plugin_host.h"
#include "train/nonfinite_steps.h"
#include "train/rank_job.h"
#include "util/crash_report.h"
#include "util/error_text.h"
#include "util/stop_signal.h"

namespace {

hlm::PluginHost load_plugins(const std::vector<std::string>& extra_dirs) {
  hlm::PluginHost host;
  auto dirs = extra_dirs;
  for (const auto& d : hlm::PluginHost::default_search_path()) dirs.push_back(d);
  host.load_all(dirs);
  return host;
}

int list_plugins(const hlm::PluginHost& host) {
  for (const auto& [key, info] : host.plugins()) {
    std::printf("%-10s %-12s %-8s %s (ABI %u.%u, SDK %s)\n", info.kind.c_str(), info.name.c_str(),
                info.version.c_str(), info.path.c_str(), info.abi_major, info.abi_minor,
                info.sdk_version.empty() ? "not recorded" : info.sdk_version.c_str());
    if (!info.description.empty()) std::printf("    %s\n", info.description.c_str());
    for (const auto& p : info.params)
      std::printf("    %-16s %-8s default %-12s %s\n", p.name, p.type,
                  p.default_json ? p.default_json : "(required)", p.help);
  }
  for (const auto& refused : host.refused()) std::printf("refused    %s\n", refused.reason.c_str());
  return 0;
}

// Where a rank writes a LibTorch backtrace ("" outside ranks).
std::string g_backtrace_path;

// An error on one line; LibTorch's backtrace into the rank's file, never on the console.
void report_error(const std::string& what) {
  std::fprintf(stderr, "error: %s\n", hlm::error_summary(what).c_str());
  if (!hlm::has_backtrace(what) || g_backtrace_path.empty()) return;
  if (std::ofstream(g_backtrace_path) << what << "\n")
    std::fprintf(stderr, "(LibTorch's backtrace: %s)\n", g_backtrace_path.c_str());
}

int run_rank(const hlm::PluginHost& host, const std::string& job_path) {
  hlm::install_crash_report();  // a rank on another node leaves its stack in its log
  std::ifstream in(job_path);
  if (!in) throw hlm::ConfigError("{}: cannot read the rank job file", job_path);
  const auto job = nlohmann::json::parse(in);
  const auto env = hlm::DistEnv::from_environment();
  g_backtrace_path = job.value("out_dir", std::string(".")) + "/rank" + std::to_string(env.rank) +
                     ".backtrace.txt";
  spdlog::set_pattern("%v");  // the launcher prefixes and timestamps rank output
  // Started by `hlm run`: label series with its run, serve them, join its Prometheus targets.
  const char* run = std::getenv("HLM_METRICS_RUN");
  const char* targets = std::getenv("HLM_METRICS_TARGETS");
  hlm::metrics().set_labels(run ? run : job.value("stage", "rank"), env.rank);
  // CPU energy is the node's: each rank on it is charged an equal share; run_rank_job adds
  // the energy of the GPU a rank trains on.
  hlm::metrics().set_energy_share(env.local_world_size, -1);
  const hlm::WithdrawTargetAtScopeExit withdraw_target;
  if (run && targets) {
    const char* bind_variable = std::getenv("HLM_METRICS_BIND");
    const std::string bind = bind_variable && *bind_variable ? bind_variable : "127.0.0.1";
    const int port = hlm::metrics().start_exposer(0, bind);
    // Bound to every interface of one node among several: Prometheus scrapes this rank at the
    // address the other nodes reach this one on (the host name may be the same on every node).
    const std::string advertised =
        hlm::is_wildcard_address(bind) && env.distributed()
            ? hlm::local_address_towards(env.master_addr, env.master_port)
            : "";
    hlm::metrics().publish_target(targets, std::string(run) + ".rank" + std::to_string(env.rank),
                                  {{"stage", job.value("stage", "")}, {"node", hlm::node_name()}},
                                  advertised);
    spdlog::info("metrics: http://{}/metrics",
                 hlm::scrape_address(advertised.empty() ? bind : advertised, port));
  }
  hlm::metrics().open_jsonl(job.at("out_dir").get<std::string>() + "/metrics.rank" +
                            std::to_string(env.rank) + ".jsonl");
  hlm::run_rank_job(job, host, env);
  return 0;
}

// A resume continues the run as it was resolved: a change to it is a new run, whose stages
// shared with the old one come from the stage cache.
void check_resume_arguments(const std::string& resume_dir, const std::string& workflow_path,
                            const std::vector<std::string>& overrides, int nproc) {
  hlm::check_run_directory(resume_dir);
  std::string given = workflow_path;
  for (const auto& o : overrides) given += (given.empty() ? "" : " ") + o;
  if (nproc > 0) given += (given.empty() ? "" : " ") + std::string("--nproc");
  if (!given.empty())
    throw hlm::ConfigError(
        "hlm run --resume {} continues that run exactly as it was resolved, so it takes no "
        "workflow, overrides or --nproc (given: {}). To change a run, start a new one with "
        "hlm run WORKFLOW.yaml [overrides]: the stages it shares with the old run are reused "
        "from the stage cache",
        resume_dir, given);
}

// --runs-dir: a folder that exists, or a path where one can be made.
CLI::Validator runs_folder_check() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        std::error_code error;
        if (std::filesystem::exists(path, error) && !std::filesystem::is_directory(path, error))
          return path + " is a file; --runs-dir takes the folder that run directories go into";
        return "";
      },
      "DIR");
}

}  // namespace

int main(int argc, char** argv) {
  hlm::install_stop_handlers();  // first: every thread started later inherits the signal mask
  hlm::reuse_freed_memory();
  CLI::App app{"hlm: train and evaluate heart language models from YAML workflows"};
  app.require_subcommand(1);
  std::vector<std::string> plugin_dirs;
  app.add_option("--plugin-path", plugin_dirs, "extra folders to search for plugins")
      ->check(CLI::ExistingDirectory);

  std::string workflow_path, resume_dir, runs_dir, job_path;
  std::vector<std::string> overrides;
  bool dry_run = false;
  int metrics_port = -1;
  int nproc = 0;
  auto* run =
      app.add_subcommand("run", "run a workflow: hlm run WORKFLOW.yaml [stage.key=value ...]");
  run->add_option("workflow", workflow_path, "workflow YAML file");
  run->add_option("overrides", overrides, "stage.key=value overrides");
  run->add_flag("--dry-run", dry_run, "print the resolved plan and stop");
  run->add_option("--resume", resume_dir, "continue a failed or interrupted run directory");
  run->add_option("--metrics-port", metrics_port, "Prometheus port (0 = any free port)")
      ->check(CLI::Range(0, 65535));
  run->add_option("--runs-dir", runs_dir, "where run directories go (default: runs)")
      ->check(runs_folder_check());
  run->add_option("--nproc", nproc, "ranks per training stage on this host (sets world_size)")
      ->check(CLI::Range(1, 4096));
  std::string launcher_name = "local", container;
  bool gpus = false;
  run->add_option("--launcher", launcher_name,
                  "how training ranks start: local (this host), srun (inside a SLURM job), "
                  "job-file (write the rank job for torchrun or srun, and stop)");
  run->add_option("--container", container, "srun: run the ranks in this Apptainer image");
  run->add_flag("--gpus", gpus, "srun: give the ranks the node's GPUs (apptainer --nv)");
  auto* submit = app.add_subcommand(
      "submit", "submit a workflow as a SLURM batch job: hlm submit WORKFLOW.yaml [overrides]");
  submit->add_option("workflow", workflow_path, "workflow YAML file")->required();
  submit->add_option("overrides", overrides, "stage.key=value or runner.key=value overrides");
  submit->add_option("--runs-dir", runs_dir, "where run directories go (default: runs)")
      ->check(runs_folder_check());
  submit->add_flag("--dry-run", dry_run,
                   "write the run directory and its job.sbatch, print the script, submit nothing");
  std::string status_dir;
  auto* status = app.add_subcommand("status", "a run's SLURM job and stages: hlm status RUN_DIR");
  status->add_option("run_dir", status_dir, "run directory")->required();
  auto* validate = app.add_subcommand("validate", "validate a workflow and exit");
  validate->add_option("workflow", workflow_path, "workflow YAML file")->required();
  validate->add_option("overrides", overrides, "stage.key=value overrides");
  auto* plugins = app.add_subcommand("plugins", "list the plugins found, with their parameters");
  auto* rank = app.add_subcommand("rank", "run one rank of a training job (used by runners)");
  rank->add_option("job", job_path, "job JSON written by the launching stage")->required();
  rank->group("");  // internal: hidden from --help
  std::string data_dir;
  std::vector<std::string> record_names;
  int threads = 0, codes = 500;
  bool all_leads = false;
  auto* qrs_eval = app.add_subcommand(
      "qrs-eval", "score the QRS detector like WFDB's bxb: hlm qrs-eval DIR [RECORD ...]");
  qrs_eval->add_option("dir", data_dir, "WFDB folder with signals and reference annotations")
      ->required();
  qrs_eval->add_option("records", record_names, "records to score (default: all in DIR)");
  qrs_eval->add_option("--threads", threads, "records scored in parallel (0 = one per core)");
  int qrs_lead = -1;
  qrs_eval->add_option(
      "--lead", qrs_lead,
      "detect on this lead alone, as beat-vq does by default (default: every lead)");
  std::string qrs_errors_csv;
  qrs_eval->add_option("--errors", qrs_errors_csv,
                       "also write each missed beat and each false detection to this CSV file");
  std::string qrs_annotator = "atr";
  qrs_eval->add_option("--annotator", qrs_annotator,
                       "the reference beats' annotation file suffix (default: atr)");
  double qrs_rate_hz = 0.0;
  qrs_eval->add_option("--rate", qrs_rate_hz,
                       "score every record resampled to this rate in Hz, its annotations moved "
                       "with it (default: each record's own rate)");
  auto* bench = app.add_subcommand(
      "bench", "benchmarks: hlm bench tokenize DIR | hlm bench pretrain | hlm bench gemm");
  bench->require_subcommand(1);
  hlm::BenchPretrainOptions pretrain_options;
  auto* bench_pretrain =
      bench->add_subcommand("pretrain", "train the reference GPT on random tokens, as JSON");
  bench_pretrain->add_option("--steps", pretrain_options.steps, "timed steps");
  bench_pretrain->add_option("--warmup", pretrain_options.warmup, "untimed steps first");
  bench_pretrain->add_option("--batch", pretrain_options.batch, "sequences per rank per step");
  bench_pretrain->add_option("--accumulation", pretrain_options.accumulation,
                             "micro-batches the step's sequences are split into");
  bench_pretrain->add_option("--context", pretrain_options.context, "tokens per sequence");
  bench_pretrain->add_option("--threads", pretrain_options.threads, "intra-op threads per rank");
  bench_pretrain->add_option("--world-size", pretrain_options.world_size, "ranks (Gloo)");
  bench_pretrain->add_option("--bucket-cap-mb", pretrain_options.bucket_cap_mb,
                             "all-reduce bucket size");
  bench_pretrain->add_option("--backend", pretrain_options.backend,
                             "gloo or shm (ranks on one host)");
  bench_pretrain->add_option("--profile-step", pretrain_options.profile_step,
                             "record this step with LibTorch's profiler (chrome trace JSON)");
  bench_pretrain->add_flag("--bf16", pretrain_options.bf16, "bf16 autocast");
  bench_pretrain->add_option("--device", pretrain_options.device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  bench_pretrain->add_option("--attention", pretrain_options.attention,
                             "the model's attention: auto, fused or written (out)");
  bench_pretrain->add_flag("!--no-bind-cores", pretrain_options.bind_cores,
                           "leave ranks unpinned (default: each on cores of its own)");
  bench_pretrain->add_flag("--independent", pretrain_options.independent,
                           "ranks train alone side by side; tokens_per_s is the slowest's");
  auto* bench_gemm = bench->add_subcommand("gemm", "one-core GEMM peaks (fp32, bf16), as JSON");
  auto* bench_tokenize =
      bench->add_subcommand("tokenize", "beat-vq beats/s per stage on a WFDB folder, as JSON");
  bench_tokenize->add_option("dir", data_dir, "WFDB folder")->required();
  bench_tokenize->add_option("--threads", threads, "records in parallel (0 = one per core)");
  bench_tokenize->add_option("--codes", codes, "codebook size K");
  bench_tokenize->add_flag("--all-leads", all_leads,
                           "detect on every lead (beat-vq detect_all_leads)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is 0; every usage error is 2
  }
  try {
    // A stop signal ends a command at once (validate, status, plugins, qrs-eval), except where
    // work is saved first: runs (stages checkpoint), ranks and benchmarks stop gracefully.
    hlm::set_stop_ends_process(!(*run || *submit || *rank || *bench_pretrain || *bench_tokenize));
    if (*qrs_eval)
      return hlm::qrs_eval_command(data_dir, record_names,
                                   {threads, qrs_lead, qrs_errors_csv, qrs_rate_hz, qrs_annotator});
    if (*bench_gemm) return hlm::bench_gemm_command();
    if (*bench_tokenize) return hlm::bench_tokenize_command(data_dir, threads, codes, all_leads);
    const auto host = load_plugins(plugin_dirs);
    if (*bench_pretrain) return hlm::bench_pretrain_command(host, pretrain_options);
    if (*plugins) return list_plugins(host);
    if (*rank) return run_rank(host, job_path);
    if (*status) {
      std::fputs(hlm::run_status(status_dir).c_str(), stdout);
      return 0;
    }
    const auto schema = hlm::build_schema(host);
    if (*run && !resume_dir.empty()) {
      check_resume_arguments(resume_dir, workflow_path, overrides, nproc);
      workflow_path = resume_dir + "/workflow.resolved.yaml";
    }
    if (workflow_path.empty())
      throw hlm::ConfigError("hlm run: give a workflow file or --resume RUN_DIR");
    auto wf = hlm::workflow::load_workflow(workflow_path, overrides, schema);
    if (nproc > 0) {  // like torchrun --nproc-per-node: every pretrain stage runs on nproc ranks
      for (const auto& stage : wf.stages)
        if (stage.kind == "pretrain")
          overrides.push_back(stage.base_id + ".world_size=" + std::to_string(nproc));
      wf = hlm::workflow::load_workflow(workflow_path, overrides, schema);
    }
    if (*validate) {
      std::printf("%s: valid (%zu stage instances)\n", workflow_path.c_str(), wf.stages.size());
      return 0;
    }
    // runner kind slurm: `hlm run` submits, as `hlm submit` does; the job itself runs with
    // --launcher srun.
    if (*submit || (wf.runner.at("kind") == "slurm" && launcher_name == "local" &&
                    resume_dir.empty() && !dry_run)) {
      const int world =
          wf.runner.at("nodes").get<int>() * wf.runner.at("ntasks_per_node").get<int>();
      for (const auto& o : hlm::world_size_overrides(wf, world)) overrides.push_back(o);
      wf = hlm::workflow::load_workflow(workflow_path, overrides, schema);
      const auto submitted =
          hlm::submit_workflow(wf, overrides, runs_dir,
                               std::filesystem::read_symlink("/proc/self/exe").string(), dry_run);
      if (dry_run) {
        std::ifstream script(submitted.script);
        std::cout << script.rdbuf();
        std::fprintf(stderr, "wrote %s (not submitted)\n", submitted.script.c_str());
      } else {
        std::printf("submitted job %s; hlm status %s\n", submitted.job_id.c_str(),
                    submitted.run_dir.c_str());
      }
      return 0;
    }
    if (dry_run) {
      const std::string runs = hlm::resolve_runs_dir(wf, runs_dir);
      std::fputs(hlm::workflow::dry_run_plan(
                     wf,
                     [&](const auto& instance, const auto& needed) {
                       const hlm::CacheKey key = hlm::stage_cache_key(instance, needed, host);
                       return hlm::workflow::PlannedCache{
                           key.key, hlm::cache_reuse_note(key, runs, wf.name, instance.id)};
                     })
                     .c_str(),
                 stdout);
      return 0;
    }
    hlm::RunOptions options{overrides, runs_dir, resume_dir, metrics_port, {}};
    options.launcher.kind = hlm::RankLauncher::parse(launcher_name);
    options.launcher.container = container;
    options.launcher.gpus = gpus;
    if ((!container.empty() || gpus) && options.launcher.kind != hlm::RankLauncher::Kind::srun)
      throw hlm::ConfigError(
          "--container and --gpus start ranks in an image under srun: add "
          "--launcher srun (inside a SLURM job), or leave them out");
    const std::string dir = hlm::run_workflow(wf, host, options);
    std::printf("%s/report.md\n", dir.c_str());
    return 0;
  } catch (const hlm::JobFileWritten& e) {
    std::printf("%s\n", e.what());
    return 0;
  } catch (const hlm::Preempted& e) {
    std::fprintf(stderr, "stopped: %s\n", e.what());
    return hlm::kExitRequeue;
  } catch (const hlm::Diverged& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return hlm::kExitDiverged;
  } catch (const hlm::AddressInUse& e) {
    std::fprintf(stderr, "error: %s; the launcher retries on another port\n", e.what());
    return hlm::kExitAddressInUse;
  } catch (const hlm::ConfigError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    report_error(e.what());
    return 1;
  }
}
