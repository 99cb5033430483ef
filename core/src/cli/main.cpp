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
#include "engine/stage.h"
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

// Every option of every subcommand, and which subcommand was given.
struct CommandLine {
  std::vector<std::string> plugin_dirs;
  std::string workflow_path, resume_dir, runs_dir, job_path, status_dir;
  std::vector<std::string> overrides;
  bool dry_run = false;
  int metrics_port = -1, nproc = 0;
  std::string launcher_name = "local", container;
  bool gpus = false;
  std::string data_dir;  // qrs-eval, bench tokenize
  std::vector<std::string> record_names;
  int threads = 0, codes = 500;
  bool all_leads = false;
  hlm::QrsEvalOptions qrs;
  hlm::BenchPretrainOptions pretrain;
  CLI::App *run = nullptr, *submit = nullptr, *status = nullptr, *validate = nullptr,
           *plugins = nullptr, *rank = nullptr, *qrs_eval = nullptr, *bench_pretrain = nullptr,
           *bench_gemm = nullptr, *bench_tokenize = nullptr;
};

void declare_run(CLI::App& app, CommandLine& c) {
  c.run = app.add_subcommand("run", "run a workflow: hlm run WORKFLOW.yaml [stage.key=value ...]");
  c.run->add_option("workflow", c.workflow_path, "workflow YAML file");
  c.run->add_option("overrides", c.overrides, "stage.key=value overrides");
  c.run->add_flag("--dry-run", c.dry_run, "print the resolved plan and stop");
  c.run->add_option("--resume", c.resume_dir, "continue a failed or interrupted run directory");
  c.run->add_option("--metrics-port", c.metrics_port, "Prometheus port (0 = any free port)")
      ->check(CLI::Range(0, 65535));
  c.run->add_option("--runs-dir", c.runs_dir, "where run directories go (default: runs)")
      ->check(runs_folder_check());
  c.run->add_option("--nproc", c.nproc, "ranks per training stage on this host (sets world_size)")
      ->check(CLI::Range(1, 4096));
  c.run->add_option("--launcher", c.launcher_name,
                    "how training ranks start: local (this host), srun (inside a SLURM job), "
                    "job-file (write the rank job for torchrun or srun, and stop)");
  c.run->add_option("--container", c.container, "srun: run the ranks in this Apptainer image");
  c.run->add_flag("--gpus", c.gpus, "srun: give the ranks the node's GPUs (apptainer --nv)");
}

void declare_workflow_commands(CLI::App& app, CommandLine& c) {
  c.submit = app.add_subcommand(
      "submit", "submit a workflow as a SLURM batch job: hlm submit WORKFLOW.yaml [overrides]");
  c.submit->add_option("workflow", c.workflow_path, "workflow YAML file")->required();
  c.submit->add_option("overrides", c.overrides, "stage.key=value or runner.key=value overrides");
  c.submit->add_option("--runs-dir", c.runs_dir, "where run directories go (default: runs)")
      ->check(runs_folder_check());
  c.submit->add_flag(
      "--dry-run", c.dry_run,
      "write the run directory and its job.sbatch, print the script, submit nothing");
  c.status = app.add_subcommand("status", "a run's SLURM job and stages: hlm status RUN_DIR");
  c.status->add_option("run_dir", c.status_dir, "run directory")->required();
  c.validate = app.add_subcommand("validate", "validate a workflow and exit");
  c.validate->add_option("workflow", c.workflow_path, "workflow YAML file")->required();
  c.validate->add_option("overrides", c.overrides, "stage.key=value overrides");
  c.plugins = app.add_subcommand("plugins", "list the plugins found, with their parameters");
  c.rank = app.add_subcommand("rank", "run one rank of a training job (used by runners)");
  c.rank->add_option("job", c.job_path, "job JSON written by the launching stage")->required();
  c.rank->group("");  // internal: hidden from --help
}

void declare_qrs_eval(CLI::App& app, CommandLine& c) {
  c.qrs_eval = app.add_subcommand(
      "qrs-eval", "score the QRS detector like WFDB's bxb: hlm qrs-eval DIR [RECORD ...]");
  c.qrs_eval->add_option("dir", c.data_dir, "WFDB folder with signals and reference annotations")
      ->required();
  c.qrs_eval->add_option("records", c.record_names, "records to score (default: all in DIR)");
  c.qrs_eval->add_option("--threads", c.qrs.threads,
                         "records scored in parallel (0 = one per core)");
  c.qrs_eval->add_option(
      "--lead", c.qrs.lead,
      "detect on this lead alone, as beat-vq does by default (default: every lead)");
  c.qrs_eval->add_option("--errors", c.qrs.errors_csv,
                         "also write each missed beat and each false detection to this CSV file");
  c.qrs_eval->add_option("--annotator", c.qrs.annotator,
                         "the reference beats' annotation file suffix (default: atr)");
  c.qrs_eval->add_option("--rate", c.qrs.rate_hz,
                         "score every record resampled to this rate in Hz, its annotations moved "
                         "with it (default: each record's own rate)");
}

void declare_bench_pretrain(CLI::App& bench, CommandLine& c) {
  hlm::BenchPretrainOptions& o = c.pretrain;
  auto* b = c.bench_pretrain =
      bench.add_subcommand("pretrain", "train the reference GPT on random tokens, as JSON");
  b->add_option("--steps", o.steps, "timed steps");
  b->add_option("--warmup", o.warmup, "untimed steps first");
  b->add_option("--batch", o.batch, "sequences per rank per step");
  b->add_option("--accumulation", o.accumulation,
                "micro-batches the step's sequences are split into");
  b->add_option("--context", o.context, "tokens per sequence");
  b->add_option("--threads", o.threads, "intra-op threads per rank");
  b->add_option("--world-size", o.world_size, "ranks (Gloo)");
  b->add_option("--bucket-cap-mb", o.bucket_cap_mb, "all-reduce bucket size");
  b->add_option("--backend", o.backend, "gloo or shm (ranks on one host)");
  b->add_option("--profile-step", o.profile_step,
                "record this step with LibTorch's profiler (chrome trace JSON)");
  b->add_flag("--bf16", o.bf16, "bf16 autocast");
  b->add_flag("--cuda-graph", o.cuda_graph,
              "replay each step's forward and backward from a CUDA graph (device cuda)");
  b->add_option("--device", o.device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  b->add_option("--attention", o.attention, "the model's attention: auto, fused or written (out)");
  b->add_flag("!--no-bind-cores", o.bind_cores,
              "leave ranks unpinned (default: each on cores of its own)");
  b->add_flag("--independent", o.independent,
              "ranks train alone side by side; tokens_per_s is the slowest's");
}

void declare_bench(CLI::App& app, CommandLine& c) {
  auto* bench = app.add_subcommand(
      "bench", "benchmarks: hlm bench tokenize DIR | hlm bench pretrain | hlm bench gemm");
  bench->require_subcommand(1);
  declare_bench_pretrain(*bench, c);
  c.bench_gemm = bench->add_subcommand("gemm", "one-core GEMM peaks (fp32, bf16), as JSON");
  c.bench_tokenize =
      bench->add_subcommand("tokenize", "beat-vq beats/s per stage on a WFDB folder, as JSON");
  c.bench_tokenize->add_option("dir", c.data_dir, "WFDB folder")->required();
  c.bench_tokenize->add_option("--threads", c.threads, "records in parallel (0 = one per core)");
  c.bench_tokenize->add_option("--codes", c.codes, "codebook size K");
  c.bench_tokenize->add_flag("--all-leads", c.all_leads,
                             "detect on every lead (beat-vq detect_all_leads)");
}

// The workflow `hlm run`, `submit` or `validate` names (or the one a resumed run resolved),
// with the overrides and --nproc applied.
hlm::workflow::Workflow load_workflow(CommandLine& c, const hlm::workflow::Schema& schema) {
  if (*c.run && !c.resume_dir.empty()) {
    check_resume_arguments(c.resume_dir, c.workflow_path, c.overrides, c.nproc);
    c.workflow_path = c.resume_dir + "/workflow.resolved.yaml";
  }
  if (c.workflow_path.empty())
    throw hlm::ConfigError("hlm run: give a workflow file or --resume RUN_DIR");
  auto wf = hlm::workflow::load_workflow(c.workflow_path, c.overrides, schema);
  if (c.nproc > 0) {  // like torchrun --nproc-per-node: every pretrain stage runs on nproc ranks
    for (const auto& stage : wf.stages)
      if (stage.kind == "pretrain")
        c.overrides.push_back(stage.base_id + ".world_size=" + std::to_string(c.nproc));
    wf = hlm::workflow::load_workflow(c.workflow_path, c.overrides, schema);
  }
  return wf;
}

// hlm submit, or hlm run of a workflow whose runner is slurm: the run folder and its batch job.
int submit_job(CommandLine& c, hlm::workflow::Workflow wf, const hlm::workflow::Schema& schema) {
  const int world = wf.runner.at("nodes").get<int>() * wf.runner.at("ntasks_per_node").get<int>();
  for (const auto& o : hlm::world_size_overrides(wf, world)) c.overrides.push_back(o);
  wf = hlm::workflow::load_workflow(c.workflow_path, c.overrides, schema);
  const auto submitted =
      hlm::submit_workflow(wf, c.overrides, c.runs_dir,
                           std::filesystem::read_symlink("/proc/self/exe").string(), c.dry_run);
  if (c.dry_run) {
    std::ifstream script(submitted.script);
    std::cout << script.rdbuf();
    std::fprintf(stderr, "wrote %s (not submitted)\n", submitted.script.c_str());
  } else {
    std::printf("submitted job %s; hlm status %s\n", submitted.job_id.c_str(),
                submitted.run_dir.c_str());
  }
  return 0;
}

int print_plan(const CommandLine& c, const hlm::workflow::Workflow& wf,
               const hlm::PluginHost& host) {
  const std::string runs = hlm::resolve_runs_dir(wf, c.runs_dir);
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

int start_run(const CommandLine& c, const hlm::workflow::Workflow& wf,
              const hlm::PluginHost& host) {
  hlm::RunOptions options{c.overrides, c.runs_dir, c.resume_dir, c.metrics_port, {}};
  options.launcher.kind = hlm::RankLauncher::parse(c.launcher_name);
  options.launcher.container = c.container;
  options.launcher.gpus = c.gpus;
  if ((!c.container.empty() || c.gpus) && options.launcher.kind != hlm::RankLauncher::Kind::srun)
    throw hlm::ConfigError(
        "--container and --gpus start ranks in an image under srun: add "
        "--launcher srun (inside a SLURM job), or leave them out");
  const std::string dir = hlm::run_workflow(wf, host, options);
  std::printf("%s/report.md\n", dir.c_str());
  return 0;
}

// run, submit and validate: the commands that read a workflow.
int workflow_command(CommandLine& c, const hlm::PluginHost& host) {
  const auto schema = hlm::build_schema(host);
  const auto wf = load_workflow(c, schema);
  hlm::check_plan(wf);  // run and submit check it too, for those who call them directly
  if (*c.validate) {
    std::printf("%s: valid (%zu stage instances)\n", c.workflow_path.c_str(), wf.stages.size());
    return 0;
  }
  // runner kind slurm: `hlm run` submits, as `hlm submit` does; the job itself runs with
  // --launcher srun.
  if (*c.submit || (wf.runner.at("kind") == "slurm" && c.launcher_name == "local" &&
                    c.resume_dir.empty() && !c.dry_run))
    return submit_job(c, wf, schema);
  if (c.dry_run) return print_plan(c, wf, host);
  return start_run(c, wf, host);
}

int dispatch(CommandLine& c) {
  // A stop signal ends a command at once (validate, status, plugins, qrs-eval), except where
  // work is saved first: runs (stages checkpoint), ranks and benchmarks stop gracefully.
  hlm::set_stop_ends_process(
      !(*c.run || *c.submit || *c.rank || *c.bench_pretrain || *c.bench_tokenize));
  if (*c.qrs_eval) return hlm::qrs_eval_command(c.data_dir, c.record_names, c.qrs);
  if (*c.bench_gemm) return hlm::bench_gemm_command();
  if (*c.bench_tokenize)
    return hlm::bench_tokenize_command(c.data_dir, c.threads, c.codes, c.all_leads);
  const auto host = load_plugins(c.plugin_dirs);
  if (*c.bench_pretrain) return hlm::bench_pretrain_command(host, c.pretrain);
  if (*c.plugins) return list_plugins(host);
  if (*c.rank) return run_rank(host, c.job_path);
  if (*c.status) {
    std::fputs(hlm::run_status(c.status_dir).c_str(), stdout);
    return 0;
  }
  return workflow_command(c, host);
}

// The exit status of a command that ended with `error`, after saying why.
int exit_status_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
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

}  // namespace

int main(int argc, char** argv) {
  hlm::install_stop_handlers();  // first: every thread started later inherits the signal mask
  hlm::reuse_freed_memory();
  CLI::App app{"hlm: train and evaluate heart language models from YAML workflows"};
  app.require_subcommand(1);
  CommandLine c;
  app.add_option("--plugin-path", c.plugin_dirs, "extra folders to search for plugins")
      ->check(CLI::ExistingDirectory);
  declare_run(app, c);
  declare_workflow_commands(app, c);
  declare_qrs_eval(app, c);
  declare_bench(app, c);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is 0; every usage error is 2
  }
  try {
    return dispatch(c);
  } catch (...) {
    return exit_status_of(std::current_exception());
  }
}
