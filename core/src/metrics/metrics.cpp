// Metrics: prometheus-cpp families behind a small typed API, plus the metrics.jsonl mirror.
#include "metrics/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "hlm/errors.h"
#include "hlm/util.h"
#include "metrics/energy.h"
#include "metrics/http_exposer.h"

namespace hlm {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Labels;

Family<Gauge>& gauge(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
Family<Counter>& counter(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

// Step times run from a few ms (tiny CPU models) to minutes (large ones on one CPU core).
const Histogram::BucketBoundaries kStepBuckets = {0.001, 0.0025, 0.005, 0.01,  0.025, 0.05,
                                                  0.1,   0.25,   0.5,   1.0,   2.5,   5.0,
                                                  10.0,  30.0,   60.0,  120.0, 300.0};

}  // namespace

struct Metrics::Impl {
  // Series computed when Prometheus scrapes, so they are fresh without a timer thread: process
  // memory and CPU time, checkpoint ages, and the energy sources' counters.
  class ProcessCollector : public prometheus::Collectable {
   public:
    explicit ProcessCollector(const Impl& impl) : impl_(impl) {}
    std::vector<prometheus::MetricFamily> Collect() const override {
      const Labels process = impl_.labels("");
      std::vector<prometheus::MetricFamily> out;
      add(out, "hlm_process_resident_memory_bytes", "Resident memory of this process",
          prometheus::MetricType::Gauge, process, double(process_resident_memory_bytes()));
      add(out, "hlm_process_cpu_seconds_total", "User and system CPU time of this process",
          prometheus::MetricType::Counter, process, process_cpu_seconds());
      const double now = unix_seconds();
      for (const auto& [stage, at] : impl_.checkpoint_times())
        add(out, "hlm_checkpoint_age_seconds", "Seconds since the stage's last complete checkpoint",
            prometheus::MetricType::Gauge, impl_.labels(stage), now - at);
      collect_energy(*impl_.energy_sources(), out, process);
      return out;
    }

   private:
    // One sample; appended to the family of that name, which is created on first use.
    static void add(std::vector<prometheus::MetricFamily>& out, const std::string& name,
                    const char* help, prometheus::MetricType type, const Labels& labels,
                    double value) {
      auto f = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.name == name; });
      if (f == out.end()) {
        out.push_back({name, help, type, {}});
        f = std::prev(out.end());
      }
      prometheus::ClientMetric m;
      for (const auto& [k, v] : labels) m.label.push_back({k, v});
      if (type == prometheus::MetricType::Counter)
        m.counter.value = value;
      else
        m.gauge.value = value;
      f->metric.push_back(std::move(m));
    }

    static void collect_energy(EnergySources& sources, std::vector<prometheus::MetricFamily>& out,
                               const Labels& process) {
      for (const auto& package : sources.rapl().read()) {
        Labels l = process;
        l["package"] = package.name;
        add(out, "hlm_cpu_energy_joules_total",
            "CPU package energy (RAPL) since this process began", prometheus::MetricType::Counter,
            l, package.joules);
      }
      for (const auto& gpu : sources.nvml().read()) {
        Labels l = process;
        l["gpu"] = std::to_string(gpu.index);
        const auto put = [&](const char* name, const char* help, prometheus::MetricType type,
                             const std::optional<double>& v) {
          if (v) add(out, name, help, type, l, *v);
        };
        put("hlm_gpu_energy_joules_total", "GPU energy since the driver loaded (NVML)",
            prometheus::MetricType::Counter, gpu.energy_joules);
        put("hlm_gpu_power_watts", "GPU power draw (NVML)", prometheus::MetricType::Gauge,
            gpu.power_watts);
        put("hlm_gpu_memory_used_bytes", "GPU memory in use (NVML)", prometheus::MetricType::Gauge,
            gpu.memory_used_bytes);
        put("hlm_gpu_utilization_ratio", "Share of time a GPU kernel ran (NVML)",
            prometheus::MetricType::Gauge, gpu.utilization_ratio);
      }
    }

    const Impl& impl_;
  };

  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Registry& r = *registry;
  Family<Gauge>& build_info = gauge(r, "hlm_build_info", "hlm build; the value is always 1");
  Family<Gauge>& stage_duration =
      gauge(r, "hlm_stage_duration_seconds", "Wall time of the last finished run of a stage");
  Family<Counter>& tokenize_beats = counter(r, "hlm_tokenize_beats_total", "Beats tokenized");
  Family<Counter>& train_steps = counter(r, "hlm_train_steps_total", "Optimizer steps taken");
  Family<Counter>& train_tokens = counter(r, "hlm_train_tokens_total", "Tokens trained on");
  Family<Counter>& train_samples =
      counter(r, "hlm_train_samples_total", "Samples (context windows) trained on");
  Family<Gauge>& stage_status = gauge(
      r, "hlm_stage_status", "1 for the stage's present status (label status), 0 for the others");
  Family<Gauge>& energy_per_sample =
      gauge(r, "hlm_train_energy_joules_per_sample",
            "Energy charged to this rank over the samples it trained since its stage's first step");
  Family<Gauge>& train_loss = gauge(r, "hlm_train_loss", "Training loss of the last step");
  Family<Gauge>& eval_loss = gauge(r, "hlm_eval_loss", "Loss of the last evaluation");
  Family<Gauge>& learning_rate = gauge(r, "hlm_train_learning_rate", "Learning rate");
  Family<Gauge>& grad_norm = gauge(r, "hlm_train_grad_norm", "Gradient norm before clipping");
  Family<Histogram>& step_duration = prometheus::BuildHistogram()
                                         .Name("hlm_train_step_duration_seconds")
                                         .Help("Wall time of one optimizer step")
                                         .Register(r);
  Family<Counter>& data_wait =
      counter(r, "hlm_data_wait_seconds_total", "Time spent waiting for training batches");
  Family<Counter>& allreduce =
      counter(r, "hlm_allreduce_seconds_total", "Time spent in gradient all-reduce");
  Family<Counter>& phase = counter(r, "hlm_train_phase_seconds_total",
                                   "Time in each phase of the optimizer steps (label phase)");
  Family<Gauge>& mfu = gauge(r, "hlm_train_mfu_ratio", "Model FLOPs utilisation (0-1)");
  Family<Gauge>& last_step =
      gauge(r, "hlm_last_step_timestamp_seconds", "Unix time of the last optimizer step");
  Family<Gauge>& checkpoint =
      gauge(r, "hlm_checkpoint_duration_seconds", "Wall time of the last checkpoint write");
  Family<Gauge>& stalled =
      gauge(r, "hlm_train_stalled",
            "1 while the rank (label rank) has made no optimizer step for stall_seconds, else 0");
  std::shared_ptr<ProcessCollector> process = std::make_shared<ProcessCollector>(*this);

  // Guards run, rank and jsonl. Scrapes take it (ProcessCollector) on the server thread, so it
  // is never held while starting or stopping the exposer, which joins that thread.
  mutable std::mutex mutex;
  std::string run;
  int rank = 0;
  std::FILE* jsonl = nullptr;
  std::string jsonl_path;
  bool jsonl_failed = false;                    // said once per file
  std::map<std::string, double> checkpoint_at;  // stage -> unix time of its last checkpoint
  int ranks_on_node = 1, gpu_index = -1;        // set_energy_share
  EnergySources* energy = nullptr;              // set_energy_sources; null: the process's
  struct EnergyStart {
    double joules = 0;
    int64_t samples = 0, last_step = 0;
  };
  std::map<std::string, EnergyStart> energy_start;  // stage -> at its first step
  mutable std::mutex exposer_mutex;                 // exposer, port
  int port = 0;
  std::string target_file;                 // set by publish_target
  std::string bind_address = "127.0.0.1";  // set by start_exposer
  // Reset first in ~Impl, so no scrape runs against a half-destroyed Impl.
  std::unique_ptr<MetricsHttpServer> exposer;

  ~Impl() {
    if (!target_file.empty()) remove_file_sd(target_file);
    exposer.reset();
    if (jsonl != nullptr) std::fclose(jsonl);
  }

  Labels labels(const std::string& stage) const {
    std::lock_guard<std::mutex> lock(mutex);
    Labels l{{"rank", std::to_string(rank)}};
    if (!run.empty()) l["run"] = run;  // an empty label would hide the file_sd target label
    if (!stage.empty()) l["stage"] = stage;
    return l;
  }

  EnergySources* energy_sources() const {
    std::lock_guard<std::mutex> lock(mutex);
    return energy != nullptr ? energy : &hlm::energy_sources();
  }

  std::map<std::string, double> checkpoint_times() const {
    std::lock_guard<std::mutex> lock(mutex);
    return checkpoint_at;
  }

  // Energy charged to this rank so far (see set_energy_share); nullopt with no source.
  std::optional<double> rank_energy_joules() const {
    EnergySources& sources = *energy_sources();
    int share = 1, gpu = -1;
    {
      std::lock_guard<std::mutex> lock(mutex);
      share = std::max(1, ranks_on_node);
      gpu = gpu_index;
    }
    // Known only where this rank's part was read: none of a GPU host's energy is this rank's
    // unless it trains on one of its GPUs.
    std::optional<double> joules;
    if (sources.rapl().available()) joules = sources.rapl().total_joules() / share;
    if (gpu >= 0)
      if (const auto g = sources.nvml().energy_joules(gpu)) joules = joules.value_or(0) + *g;
    return joules;
  }

  // One JSON line per (name, value), all stamped with the same time; flushed together.
  void write_jsonl(const Labels& labels, const std::vector<std::pair<const char*, double>>& values,
                   const nlohmann::json& extra = nlohmann::json::object()) {
    std::lock_guard<std::mutex> lock(mutex);
    if (jsonl == nullptr) return;
    const double t = unix_seconds();
    for (const auto& [name, value] : values) {
      nlohmann::json j = {{"t", t}, {"name", name}, {"value", value}};
      for (const auto& [k, v] : labels)
        j[k] = k == "rank" ? nlohmann::json(rank) : nlohmann::json(v);
      j.update(extra);
      const std::string line = j.dump() + "\n";
      std::fwrite(line.data(), 1, line.size(), jsonl);
    }
    if (std::fflush(jsonl) != 0 || std::ferror(jsonl)) {
      // Disk full: the run goes on (its checkpoints say whether it can), said once.
      if (!jsonl_failed)
        std::fprintf(stderr,
                     "warning: cannot write the metrics log %s (%s); the run goes on, and "
                     "metrics lines are missing from that file until space is freed\n",
                     jsonl_path.c_str(), std::strerror(errno));
      jsonl_failed = true;
      std::clearerr(jsonl);
    }
  }
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {
  impl_->build_info
      .Add({{"version", HLM_VERSION}, {"torch", HLM_TORCH_VERSION}, {"cuda", HLM_CUDA_VERSION}})
      .Set(1);
}

Metrics::~Metrics() = default;

void Metrics::set_labels(const std::string& run, int rank) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->run = run;
  impl_->rank = rank;
}

int Metrics::start_exposer(int port, const std::string& bind_address) {
  std::lock_guard<std::mutex> lock(impl_->exposer_mutex);
  if (impl_->exposer) throw InternalError("metrics exposer started twice");
  const std::string address = bind_address + ":" + std::to_string(port);
  try {
    impl_->exposer = std::make_unique<MetricsHttpServer>(
        bind_address, port,
        std::vector<std::shared_ptr<prometheus::Collectable>>{impl_->registry, impl_->process});
  } catch (const Error&) {
    throw;  // names the address, the failed call and what to do
  } catch (const std::exception& e) {
    // std::thread could not start the serving thread: the system, not the configuration.
    throw Error("cannot serve metrics on {}: {}", address, e.what());
  }
  impl_->port = impl_->exposer->port();
  impl_->bind_address = bind_address;
  return impl_->port;
}

std::string Metrics::bind_address() const {
  std::lock_guard<std::mutex> lock(impl_->exposer_mutex);
  return impl_->bind_address;
}

int Metrics::exposer_port() const {
  std::lock_guard<std::mutex> lock(impl_->exposer_mutex);
  return impl_->port;
}

std::string Metrics::run_label() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->run;
}

void Metrics::publish_target(const std::string& targets_dir, const std::string& name,
                             const std::map<std::string, std::string>& labels,
                             const std::string& advertised_host) {
  const int port = exposer_port();
  if (port == 0) throw InternalError("publish_target before start_exposer");
  std::map<std::string, std::string> all = labels;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    all["run"] = impl_->run;
    all["rank"] = std::to_string(impl_->rank);
  }
  withdraw_target();
  impl_->target_file = targets_dir + "/" + name + ".json";
  const std::string target = advertised_host.empty() ? scrape_address(bind_address(), port)
                                                     : scrape_address(advertised_host, port);
  write_file_sd(impl_->target_file, {target}, all);
}

void Metrics::withdraw_target() {
  if (impl_->target_file.empty()) return;
  remove_file_sd(impl_->target_file);
  impl_->target_file.clear();
}

std::string Metrics::targets_dir() const {
  if (impl_->target_file.empty()) return "";
  return std::filesystem::path(impl_->target_file).parent_path().string();
}

void Metrics::open_jsonl(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) throw DataError("{}: cannot open metrics log for appending", path);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->jsonl != nullptr) std::fclose(impl_->jsonl);
  impl_->jsonl = f;
  impl_->jsonl_path = path;
  impl_->jsonl_failed = false;
}

void Metrics::close_jsonl() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->jsonl != nullptr) std::fclose(impl_->jsonl);
  impl_->jsonl = nullptr;
}

void Metrics::train_step(const std::string& stage, const TrainStep& s, bool to_jsonl) {
  Impl& m = *impl_;
  const Labels l = m.labels(stage);
  Counter& steps = m.train_steps.Add(l);
  Counter& tokens = m.train_tokens.Add(l);
  Counter& samples = m.train_samples.Add(l);
  Counter& wait = m.data_wait.Add(l);
  Counter& reduce = m.allreduce.Add(l);
  steps.Increment();
  tokens.Increment(static_cast<double>(s.rank_tokens));
  samples.Increment(static_cast<double>(s.rank_samples));
  wait.Increment(s.data_wait_seconds);
  reduce.Increment(s.allreduce_seconds);
  m.train_loss.Add(l).Set(s.loss);
  m.learning_rate.Add(l).Set(s.learning_rate);
  m.grad_norm.Add(l).Set(s.grad_norm);
  m.step_duration.Add(l, kStepBuckets).Observe(s.step_seconds);
  const double now = unix_seconds();
  m.last_step.Add(l).Set(now);
  std::vector<std::pair<const char*, double>> values = {
      {"hlm_train_loss", s.loss},
      {"hlm_train_learning_rate", s.learning_rate},
      {"hlm_train_grad_norm", s.grad_norm},
      {"hlm_train_step_duration_seconds", s.step_seconds},
      {"hlm_train_steps_total", steps.Value()},
      {"hlm_train_tokens_total", tokens.Value()},
      {"hlm_train_samples_total", samples.Value()},
      {"hlm_data_wait_seconds_total", wait.Value()},
      {"hlm_allreduce_seconds_total", reduce.Value()}};
  if (s.mfu_ratio >= 0) {
    m.mfu.Add(l).Set(s.mfu_ratio);
    values.emplace_back("hlm_train_mfu_ratio", s.mfu_ratio);
  }
  if (const auto joules = m.rank_energy_joules()) {
    std::lock_guard<std::mutex> lock(m.mutex);
    Impl::EnergyStart& start = m.energy_start[stage];
    // From a job's first step's end on (startup and compilation are not training); a step
    // number not above the last one seen is a new job under the same stage label (a repeat).
    if (start.last_step <= 0 || s.step <= start.last_step) {
      start = {*joules, 0, s.step};
    } else {
      start.samples += s.rank_samples;
      start.last_step = s.step;
      const double per_sample = (*joules - start.joules) / double(start.samples);
      m.energy_per_sample.Add(l).Set(per_sample);
      values.emplace_back("hlm_train_energy_joules_per_sample", per_sample);
    }
  }

  if (to_jsonl) m.write_jsonl(l, values, {{"step", s.step}});
  for (const auto& [name, seconds] :
       {std::pair{"forward", s.forward_seconds}, std::pair{"backward", s.backward_seconds},
        std::pair{"optimizer", s.optimizer_seconds}}) {
    Labels with_phase = l;
    with_phase["phase"] = name;
    Counter& c = m.phase.Add(with_phase);
    c.Increment(seconds);
    if (to_jsonl)
      m.write_jsonl(with_phase, {{"hlm_train_phase_seconds_total", c.Value()}}, {{"step", s.step}});
  }
}

void Metrics::train_stalled(const std::string& stage, int rank, bool stalled) {
  Labels l = impl_->labels(stage);
  l["rank"] = std::to_string(rank);  // the rank watched, not this (launching) process's
  impl_->stalled.Add(l).Set(stalled ? 1 : 0);
  impl_->write_jsonl(l, {{"hlm_train_stalled", stalled ? 1.0 : 0.0}});
}

void Metrics::eval_loss(const std::string& stage, double loss, uint64_t step) {
  const Labels l = impl_->labels(stage);
  impl_->eval_loss.Add(l).Set(loss);
  impl_->write_jsonl(l, {{"hlm_eval_loss", loss}}, {{"step", step}});
}

void Metrics::tokenize_beats(const std::string& stage, uint64_t beats) {
  const Labels l = impl_->labels(stage);
  Counter& c = impl_->tokenize_beats.Add(l);
  c.Increment(static_cast<double>(beats));
  impl_->write_jsonl(l, {{"hlm_tokenize_beats_total", c.Value()}});
}

void Metrics::stage_finished(const std::string& stage, double seconds) {
  const Labels l = impl_->labels(stage);
  impl_->stage_duration.Add(l).Set(seconds);
  impl_->write_jsonl(l, {{"hlm_stage_duration_seconds", seconds},
                         {"hlm_process_resident_memory_bytes",
                          static_cast<double>(process_resident_memory_bytes())}});
}

void Metrics::checkpoint_written(const std::string& stage, double seconds) {
  const Labels l = impl_->labels(stage);
  impl_->checkpoint.Add(l).Set(seconds);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->checkpoint_at[stage] = unix_seconds();
  }
  impl_->write_jsonl(l, {{"hlm_checkpoint_duration_seconds", seconds}});
}

void Metrics::stage_status(const std::string& stage, const std::string& status) {
  static const char* const kStatuses[] = {"running", "done", "failed", "cached", "interrupted"};
  if (std::find(std::begin(kStatuses), std::end(kStatuses), status) == std::end(kStatuses))
    throw InternalError("stage status '{}' is not one of hlm_stage_status's", status);
  const Labels l = impl_->labels(stage);
  for (const char* s : kStatuses) {
    Labels with_status = l;
    with_status["status"] = s;
    impl_->stage_status.Add(with_status).Set(status == s ? 1 : 0);
  }
  impl_->write_jsonl(l, {{"hlm_stage_status", 1.0}}, {{"status", status}});
}

void Metrics::training_finished(const std::string& stage) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->checkpoint_at.erase(stage);  // no training left to lose: its age would only mislead
}

void Metrics::set_energy_sources(EnergySources* sources) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->energy = sources;
}

void Metrics::set_energy_share(int ranks_on_node, int gpu_index) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->ranks_on_node = ranks_on_node;
  impl_->gpu_index = gpu_index;
}

Metrics& metrics() {
  // Never destroyed: threads still running at exit may report, and every update is flushed.
  static Metrics* instance = new Metrics();
  return *instance;
}

}  // namespace hlm
