// `hlm bench tokenize`: the beat-vq pipeline (plugins/tokenizers/beat_vq/beat_vq.cpp) stage by
// stage through hlm::dsp, timed per stage on the worker threads.
#include "cli/bench_tokenize.h"

#include <sys/resource.h>

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine/parallel.h"
#include "hlm/dsp/beat_match.h"
#include "hlm/dsp/beat_window.h"
#include "hlm/dsp/filter.h"
#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/qrs.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"
#include "hlm/util.h"
#include "hlm/wfdb.h"

namespace hlm {
namespace {

enum Stage { kRead, kFilter, kDetect, kWindow, kAssign, kStageCount };
const char* const kStageNames[kStageCount] = {"read", "filter", "detect", "window", "assign"};

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct StageTimes {
  double wall[kStageCount] = {};
  double cpu[kStageCount] = {};
  StageTimes& operator+=(const StageTimes& o) {
    for (int s = 0; s < kStageCount; ++s) wall[s] += o.wall[s], cpu[s] += o.cpu[s];
    return *this;
  }
};

// Charges the time since the previous lap to a stage: wall time as the user waits for it, and
// this thread's CPU time, which other processes on a shared machine do not inflate.
class Lap {
 public:
  explicit Lap(StageTimes& times) : times_(times) {}
  void operator()(Stage s) {
    const double wall = now_seconds(), cpu = thread_cpu_seconds();
    times_.wall[s] += wall - wall_, times_.cpu[s] += cpu - cpu_;
    wall_ = wall, cpu_ = cpu;
  }

 private:
  StageTimes& times_;
  double wall_ = now_seconds(), cpu_ = thread_cpu_seconds();
};

struct RecordRun {
  StageTimes times;
  int64_t samples = 0;
  double sampling_hz = 0.0;
  std::vector<int64_t> peaks, reference;  // for scoring, after the timed passes
  std::vector<float> features;            // 64 floats per kept beat
  std::vector<int64_t> positions;
  std::vector<float> rr_seconds;
  std::vector<uint8_t> labels;
  std::vector<uint32_t> tokens;
  std::string error;
};

// beat-vq's extract(): detection on lead 0 (or on every lead of its length), R peaks on lead 0.
void extract(const std::string& dir, const std::string& name, bool all_leads, RecordRun& run) {
  Lap lap(run.times);
  const Record r = wfdb::read_record(dir, name);
  if (r.digital.empty() || r.digital[0].empty())
    throw DataError("no signal samples (annotation-only record?)");
  const std::vector<std::vector<float>> leads =
      all_leads ? r.physical_leads(0) : std::vector<std::vector<float>>{r.physical(0)};
  const std::vector<const float*> pointers = lead_pointers(leads);
  const size_t n = leads[0].size();
  const double fs = r.sampling_hz;
  lap(kRead);
  const std::vector<float> clean = dsp::clean_ecg(leads[0].data(), n, fs);
  lap(kFilter);
  std::vector<int64_t> peaks = dsp::detect_qrs(pointers, n, fs);
  lap(kDetect);
  const std::vector<size_t> kept =
      dsp::cut_beat_windows(clean.data(), n, fs, peaks, dsp::BeatWindowOptions{}, &run.features);
  for (size_t k : kept) {
    run.positions.push_back(peaks[k]);
    run.rr_seconds.push_back(k > 0 ? float(double(peaks[k] - peaks[k - 1]) / fs) : 0.0f);
  }
  run.labels = dsp::label_beats(run.positions, r.annotations, dsp::match_window_samples(fs));
  lap(kWindow);
  run.reference = dsp::reference_beats(r.annotations);
  run.peaks = std::move(peaks);
  run.samples = int64_t(n), run.sampling_hz = fs;
}

double rate(double beats, double seconds) { return seconds > 0 ? beats / seconds : 0.0; }

}  // namespace

int bench_tokenize_command(const std::string& dir, int threads, int codes, bool all_leads) {
  const double start = now_seconds();
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<std::string> names = wfdb::list_records(dir);
  if (names.empty())
    throw ConfigError(dir + ": no WFDB records (no RECORDS file and no .hea files)");
  std::vector<RecordRun> runs(names.size());

  const double extract_start = now_seconds();
  parallel_for(names.size(), threads, [&](size_t i) {
    try {
      extract(dir, names[i], all_leads, runs[i]);
    } catch (const Error& e) {
      runs[i] = RecordRun{};
      runs[i].error = e.what();
    }
  });
  const double extract_seconds = now_seconds() - extract_start;

  // The codebook is fitted once and reused by later runs, so its time stays out of the total.
  const double fit_start = now_seconds();
  std::vector<const float*> rows;
  for (const RecordRun& r : runs)
    for (size_t i = 0; i < r.positions.size(); ++i) rows.push_back(&r.features[i * 64]);
  if (rows.empty()) throw DataError(dir + ": no beats found in any record");
  dsp::KmeansOptions km;
  km.codes = codes;
  km.threads = threads;
  const dsp::Codebook codebook = dsp::kmeans_fit(rows, 64, km);
  const double fit_seconds = now_seconds() - fit_start;

  const double assign_start = now_seconds();
  parallel_for(names.size(), threads, [&](size_t i) {
    RecordRun& r = runs[i];
    Lap lap(r.times);
    r.tokens.resize(r.positions.size());
    dsp::assign_nearest(codebook, r.features.data(), r.tokens.size(), r.tokens.data());
    for (uint32_t& t : r.tokens) t += kFirstContentToken;
    lap(kAssign);
  });
  const double assign_seconds = now_seconds() - assign_start;

  StageTimes times;
  int64_t samples = 0, detected = 0, tokenized = 0, reference = 0;
  dsp::MatchCounts counts;
  int failed = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RecordRun& r = runs[i];
    if (!r.error.empty()) {
      std::fprintf(stderr, "bench tokenize: %s/%s: %s\n", dir.c_str(), names[i].c_str(),
                   r.error.c_str());
      ++failed;
      continue;
    }
    times += r.times;
    samples += r.samples, detected += int64_t(r.peaks.size());
    reference += int64_t(r.reference.size()), tokenized += int64_t(r.tokens.size());
    counts += dsp::match_beats(r.reference, r.peaks, dsp::match_window_samples(r.sampling_hz));
  }
  const double beats = double(detected);
  nlohmann::json stages = nlohmann::json::object();
  for (int s = 0; s < kStageCount; ++s)
    stages[kStageNames[s]] = {{"thread_seconds", times.wall[s]},
                              {"cpu_seconds", times.cpu[s]},
                              {"beats_per_s", rate(beats * threads, times.wall[s])}};
  const double total = extract_seconds + assign_seconds;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const nlohmann::json out = {
      {"impl", "hlm-cpp"},
      {"records", names.size() - size_t(failed)},
      {"failed_records", failed},
      {"threads", threads},
      {"codes", codes},
      {"detect_leads", all_leads ? "all" : "first"},
      {"samples", samples},
      {"beats_detected", detected},
      {"beats_tokenized", tokenized},
      {"reference_beats", reference},
      {"tp", counts.tp},
      {"fn", counts.fn},
      {"fp", counts.fp},
      {"se", counts.sensitivity()},
      {"ppv", counts.positive_predictivity()},
      {"stages", stages},
      {"fit_seconds", fit_seconds},
      {"total_seconds", total},
      {"beats_per_s", rate(beats, total)},
      {"detect_beats_per_s_one_core", rate(beats, times.cpu[kDetect])},
      {"detect_beats_per_s_one_core_wall", rate(beats, times.wall[kDetect])},
      {"wall_seconds", now_seconds() - start},
      {"peak_rss_bytes", int64_t(usage.ru_maxrss) * 1024},
      {"cpu_count", std::thread::hardware_concurrency()}};
  std::printf("%s\n", out.dump().c_str());
  return failed ? 1 : 0;
}

}  // namespace hlm
