// Process-wide metrics: Prometheus series for live dashboards, mirrored to metrics.jsonl so
// reports and plots work without a Prometheus server. Thread-safe; usable with no exposer.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "metrics/train_step.h"

namespace hlm {

class EnergySources;

// Series (all names hlm_*, labels run, rank and, where it applies, stage):
//   hlm_build_info{version,torch,cuda} 1           hlm_stage_duration_seconds       gauge
//   hlm_tokenize_beats_total                        hlm_train_steps_total
//   hlm_train_tokens_total                          hlm_train_loss, hlm_eval_loss     gauges
//   hlm_train_learning_rate, hlm_train_grad_norm    hlm_train_step_duration_seconds histogram
//   hlm_data_wait_seconds_total                     hlm_allreduce_seconds_total
//   hlm_train_mfu_ratio                             hlm_last_step_timestamp_seconds  (unix)
//   hlm_checkpoint_duration_seconds                 hlm_process_resident_memory_bytes
//   hlm_train_phase_seconds_total{phase="forward"|"backward"|"optimizer"}
//   hlm_train_stalled (served by the process that launched the ranks, label rank = the rank)
//   hlm_train_samples_total                         hlm_process_cpu_seconds_total
//   hlm_checkpoint_age_seconds (since the stage's last complete checkpoint, while it trains)
//   hlm_stage_status{status="running"|"done"|"failed"|"cached"|"interrupted"} 1 for the
//     stage's present status, 0 for the others
// Energy, only where a source is readable (energy.h): hlm_cpu_energy_joules_total{package},
//   hlm_gpu_energy_joules_total{gpu}, hlm_gpu_power_watts{gpu}, hlm_gpu_memory_used_bytes{gpu},
//   hlm_gpu_utilization_ratio{gpu}, hlm_train_energy_joules_per_sample (this rank's share, see
//   set_energy_share, over the samples since its stage's first step).
// Memory, CPU time, checkpoint age and the energy counters are read at scrape time.
class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Labels every later series with the run id and this process's rank (default "", 0).
  void set_labels(const std::string& run, int rank);
  // Serves /metrics on bind_address:port (port 0 = any free port) and returns the bound port.
  // Throws hlm::ConfigError when the port is taken. One exposer per Metrics.
  int start_exposer(int port, const std::string& bind_address = "127.0.0.1");
  int exposer_port() const;          // 0 when no exposer runs
  std::string bind_address() const;  // as given to start_exposer
  std::string run_label() const;     // as set by set_labels

  // Names this process's exposer in <targets_dir>/<name>.json for Prometheus's file_sd (one
  // file per run and per rank process, so concurrent runs keep their own targets), with the
  // run and rank labels plus `labels`. The file goes at withdraw_target() (metrics() lives
  // until exit: hold a WithdrawTargetAtScopeExit); a process killed with SIGKILL leaves it,
  // and Prometheus shows that target down. The target is advertised_host:port, or with ""
  // scrape_address() of the bind address.
  void publish_target(const std::string& targets_dir, const std::string& name,
                      const std::map<std::string, std::string>& labels = {},
                      const std::string& advertised_host = "");
  void withdraw_target();
  std::string targets_dir() const;  // "" when nothing is published

  // Appends one JSON line per updated value to path (created or appended to, flushed per
  // update): {"t": unix_seconds, "name": ..., "value": ..., "run": ..., "rank": ..., ...}.
  // Rank 0 writes <run dir>/metrics.jsonl; other ranks may use metrics.rank<N>.jsonl.
  void open_jsonl(const std::string& path);
  void close_jsonl();

  // Every step updates the series; to_jsonl also writes it to metrics.jsonl (the trainer
  // passes its log_every's steps, so the file grows at the rate of the log).
  void train_step(const std::string& stage, const TrainStep& s, bool to_jsonl = true);
  void eval_loss(const std::string& stage, double loss, uint64_t step = 0);
  // Set by the process that launched the ranks (StallWatcher), labelled with the watched rank.
  void train_stalled(const std::string& stage, int rank, bool stalled);
  void tokenize_beats(const std::string& stage, uint64_t beats);
  void stage_finished(const std::string& stage, double seconds);
  void checkpoint_written(const std::string& stage, double seconds);
  // The stage's training ended (however): its checkpoint age is withdrawn.
  void training_finished(const std::string& stage);
  // status: running, done, failed, cached or interrupted.
  void stage_status(const std::string& stage, const std::string& status);
  // The energy this process's training is charged with: the CPU packages' energy divided among
  // the ranks sharing the node, plus its own GPU's (gpu_index: NVML's index of the GPU it
  // trains on; < 0: none). Default: 1 rank, no GPU.
  void set_energy_share(int ranks_on_node, int gpu_index);
  // The sources read for the energy series (default: energy_sources(), this host's). Not owned.
  void set_energy_sources(EnergySources* sources);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The registry stages and the trainer report to.
Metrics& metrics();

// Withdraws metrics()'s published target when it goes out of scope, however the scope ends.
struct WithdrawTargetAtScopeExit {
  WithdrawTargetAtScopeExit() = default;
  WithdrawTargetAtScopeExit(const WithdrawTargetAtScopeExit&) = delete;
  WithdrawTargetAtScopeExit& operator=(const WithdrawTargetAtScopeExit&) = delete;
  ~WithdrawTargetAtScopeExit() { metrics().withdraw_target(); }
};

// Resident set size of this process in bytes (0 when /proc is unavailable).
uint64_t process_resident_memory_bytes();
// The node this process runs on, for the `node` target label: SLURM's name for it
// (SLURMD_NODENAME) where set, since containers and namespaces may share one host name, else
// the host name.
std::string node_name();
// User plus system CPU time of this process, all threads, in seconds.
double process_cpu_seconds();

// Writes a Prometheus file_sd target file (atomically: tmp + rename, since Prometheus watches
// it): [{"targets": ["host:port", ...], "labels": {...}}].
void write_file_sd(const std::string& path, const std::vector<std::string>& targets,
                   const std::map<std::string, std::string>& labels);
void remove_file_sd(const std::string& path);
// 0.0.0.0, :: or [::]: every interface of this host.
bool is_wildcard_address(const std::string& address);
// host:port Prometheus scrapes for an exposer bound to bind_address: the address itself, or
// this host's name for a wildcard bind (0.0.0.0, ::), IPv6 addresses in brackets.
std::string scrape_address(const std::string& bind_address, int port);

}  // namespace hlm
