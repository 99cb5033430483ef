// `hlm bench tokenize`: the beat-vq pipeline (plugins/tokenizers/beat_vq/beat_vq.cpp) stage by
// stage through hlm::dsp. Each stage runs over every record on all threads before the next
// starts, so its rate is measured on the machine (beats / wall seconds of that stage), not
// derived from per-thread times. The whole tokenize stage (plugins to a written token store)
// is timed by tools/bench/tokenize through `hlm run`.
#include "cli/bench_tokenize.h"

#include <sys/resource.h>

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "distributed/preemption.h"
#include "hlm/dsp/beat_match.h"
#include "hlm/dsp/beat_window.h"
#include "hlm/dsp/filter.h"
#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/qrs.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"
#include "hlm/util.h"
#include "hlm/wfdb.h"
#include "util/parallel.h"

namespace hlm {
namespace {

enum Stage { kRead, kFilter, kDetect, kWindow, kAssign, kStageCount };
const char* const kStageNames[kStageCount] = {"read", "filter", "detect", "window", "assign"};

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct RecordRun {
  Record record;
  std::vector<std::vector<float>> leads;  // lead 0 first (every lead of its length with all_leads)
  std::vector<float> clean;
  std::vector<int64_t> peaks, reference;
  std::vector<float> features;  // 64 floats per kept beat
  std::vector<int64_t> positions;
  std::vector<float> rr_seconds;
  std::vector<uint8_t> labels;
  std::vector<uint32_t> tokens;
  double detect_cpu_seconds = 0;
  std::string error;
};

double rate(double beats, double seconds) { return seconds > 0 ? beats / seconds : 0.0; }

// Runs `fn` for every record that has not failed, on `threads` threads; returns wall seconds.
template <class Fn>
double timed_stage(std::vector<RecordRun>& runs, int threads, Fn fn) {
  if (stop_signal_received())
    throw Preempted("bench tokenize stopped by a signal; nothing to keep");
  const double start = now_seconds();
  parallel_for(runs.size(), threads, [&](size_t i) {
    if (runs[i].error.empty()) try {
        fn(runs[i]);
      } catch (const Error& e) {
        runs[i].error = e.what();
      }
  });
  return now_seconds() - start;
}

// k-means over every beat's 64 features, as beat-vq fits its codebook.
dsp::Codebook fit_codebook(const std::vector<RecordRun>& runs, int codes, int threads,
                           const std::string& dir) {
  std::vector<const float*> rows;
  for (const RecordRun& r : runs)
    if (r.error.empty())
      for (size_t i = 0; i < r.positions.size(); ++i) rows.push_back(&r.features[i * 64]);
  if (rows.empty()) throw DataError("{}: no beats found in any record", dir);
  dsp::KmeansOptions km;
  km.codes = codes;
  km.threads = threads;
  return dsp::kmeans_fit(rows, 64, km);
}

// The records' counts summed, and the detector's matches against their reference beats; a
// failed record is named on stderr and counted.
struct Totals {
  double detect_cpu = 0;
  int64_t samples = 0, detected = 0, tokenized = 0, reference = 0;
  dsp::MatchCounts counts;
  int failed = 0;
};

Totals totals_of(const std::vector<RecordRun>& runs, const std::vector<std::string>& names,
                 const std::string& dir) {
  Totals t;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RecordRun& r = runs[i];
    if (!r.error.empty()) {
      std::fprintf(stderr, "bench tokenize: %s/%s: %s\n", dir.c_str(), names[i].c_str(),
                   r.error.c_str());
      ++t.failed;
      continue;
    }
    const std::vector<int64_t> reference_beats = dsp::reference_beats(r.record.annotations);
    t.detect_cpu += r.detect_cpu_seconds;
    t.samples += int64_t(r.leads[0].size()), t.detected += int64_t(r.peaks.size());
    t.reference += int64_t(reference_beats.size()), t.tokenized += int64_t(r.tokens.size());
    t.counts +=
        dsp::match_beats(reference_beats, r.peaks, dsp::match_window_samples(r.record.sampling_hz));
  }
  return t;
}

// The stages before the codebook, each timed over every record into wall[]: read, filter,
// detect, cut windows (beat-vq's extract(): detection on lead 0, or every lead of its length,
// R peaks on lead 0).
void detect_and_window(std::vector<RecordRun>& runs, const std::vector<std::string>& names,
                       const std::string& dir, int threads, bool all_leads, double* wall) {
  wall[kRead] = timed_stage(runs, threads, [&](RecordRun& r) {
    const size_t i = size_t(&r - runs.data());
    r.record = wfdb::read_record(dir, names[i]);
    if (r.record.digital.empty() || r.record.digital[0].empty())
      throw DataError("no signal samples (annotation-only record?)");
    if (all_leads)
      r.leads = r.record.physical_leads(0);
    else
      r.leads.push_back(r.record.physical(0));
    // The samples as stored are not read again (the tokenizer drops them with the record);
    // freed here, the next record's reuse their pages instead of faulting in fresh ones.
    r.record.digital = {};
  });
  wall[kFilter] = timed_stage(runs, threads, [&](RecordRun& r) {
    r.clean = dsp::clean_ecg(r.leads[0].data(), r.leads[0].size(), r.record.sampling_hz);
  });
  wall[kDetect] = timed_stage(runs, threads, [&](RecordRun& r) {
    const double cpu = thread_cpu_seconds();
    r.peaks = dsp::detect_qrs(lead_pointers(r.leads), r.leads[0].size(), r.record.sampling_hz);
    r.detect_cpu_seconds = thread_cpu_seconds() - cpu;
  });
  wall[kWindow] = timed_stage(runs, threads, [&](RecordRun& r) {
    const double fs = r.record.sampling_hz;
    const std::vector<size_t> kept = dsp::cut_beat_windows(
        r.clean.data(), r.clean.size(), fs, r.peaks, dsp::BeatWindowOptions{}, &r.features);
    for (size_t k : kept) {
      r.positions.push_back(r.peaks[k]);
      r.rr_seconds.push_back(k > 0 ? float(double(r.peaks[k] - r.peaks[k - 1]) / fs) : 0.0f);
    }
    r.labels = dsp::label_beats(r.positions, r.record.annotations, dsp::match_window_samples(fs));
  });
}

}  // namespace

int bench_tokenize_command(const std::string& dir, int threads, int codes, bool all_leads) {
  const double start = now_seconds();
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<std::string> names = wfdb::list_records(dir);
  if (names.empty())
    throw ConfigError("{}: no WFDB records (no RECORDS file and no .hea files)", dir);
  std::vector<RecordRun> runs(names.size());
  double wall[kStageCount] = {};

  detect_and_window(runs, names, dir, threads, all_leads, wall);

  // The codebook is fitted once and reused by later runs, so its time stays out of the total.
  const double fit_start = now_seconds();
  const dsp::Codebook codebook = fit_codebook(runs, codes, threads, dir);
  const double fit_seconds = now_seconds() - fit_start;

  const dsp::PackedCodebook packed(codebook);  // once, as the tokenizer packs it
  wall[kAssign] = timed_stage(runs, threads, [&](RecordRun& r) {
    r.tokens.resize(r.positions.size());
    packed.assign(r.features.data(), r.tokens.size(), r.tokens.data());
    for (uint32_t& t : r.tokens) t += kFirstContentToken;
  });

  const Totals t = totals_of(runs, names, dir);
  const double beats = double(t.detected);
  nlohmann::json stages = nlohmann::json::object();
  double total = 0;
  for (int s = 0; s < kStageCount; ++s) {
    stages[kStageNames[s]] = {{"seconds", wall[s]}, {"beats_per_s", rate(beats, wall[s])}};
    total += wall[s];
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const nlohmann::json out = {{"impl", "hlm-cpp"},
                              {"records", names.size() - size_t(t.failed)},
                              {"failed_records", t.failed},
                              {"threads", threads},
                              {"codes", codes},
                              {"detect_leads", all_leads ? "all" : "first"},
                              {"samples", t.samples},
                              {"beats_detected", t.detected},
                              {"beats_tokenized", t.tokenized},
                              {"reference_beats", t.reference},
                              {"tp", t.counts.tp},
                              {"fn", t.counts.fn},
                              {"fp", t.counts.fp},
                              {"se", t.counts.sensitivity()},
                              {"ppv", t.counts.positive_predictivity()},
                              {"stages", stages},
                              {"fit_seconds", fit_seconds},
                              {"total_seconds", total},
                              {"beats_per_s", rate(beats, total)},
                              {"detect_beats_per_s_one_core", rate(beats, t.detect_cpu)},
                              {"wall_seconds", now_seconds() - start},
                              {"peak_rss_bytes", int64_t(usage.ru_maxrss) * 1024},
                              {"cpu_count", std::thread::hardware_concurrency()}};
  std::printf("%s\n", out.dump().c_str());
  return t.failed ? 1 : 0;
}

}  // namespace hlm
