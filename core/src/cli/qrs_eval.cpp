// `hlm qrs-eval`: the detector of hlm/dsp/qrs.h scored per record and gross, like WFDB's bxb.
#include "cli/qrs_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <thread>

#include "hlm/dsp/beat_match.h"
#include "hlm/dsp/qrs.h"
#include "hlm/dsp/resample.h"
#include "hlm/errors.h"
#include "hlm/wfdb.h"
#include "util/parallel.h"

namespace hlm {
namespace {

// One beat the detector got wrong: a reference beat with no detection near it (missed), or a
// detection with no reference beat (false).
struct DetectionError {
  int64_t sample = 0;
  bool missed = false;
  uint8_t code = 0;  // the reference beat's annotation code (missed beats only)
};

struct RecordScore {
  dsp::MatchCounts counts;
  dsp::MatchCounts ventricular;  // the reference beats of AAMI class V only (TP and FN)
  int64_t vf_reference = 0, vf_detected = 0;     // not scored: inside VF episodes (EC57)
  std::vector<DetectionError> detection_errors;  // in sample order
  double sampling_hz = 0;
  std::string failure;  // non-empty when the record could not be scored
};

// The missed reference beats and the false detections of one comparison, in sample order.
std::vector<DetectionError> detection_errors(const std::vector<Annotation>& annotations,
                                             const dsp::BeatComparison& comparison) {
  std::vector<DetectionError> errors;
  for (int64_t sample : comparison.false_detected) errors.push_back({sample, false, 0});
  for (size_t i : comparison.missed)
    errors.push_back({annotations[i].sample, true, annotations[i].code});
  std::sort(errors.begin(), errors.end(),
            [](const DetectionError& a, const DetectionError& b) { return a.sample < b.sample; });
  return errors;
}

// One CSV row per error of every record scored, so that each can be looked up in the signal.
// The file is opened before any record is scored, so a bad path costs no scoring.
void write_errors_csv(std::ofstream& out, const std::string& path,
                      const std::vector<std::string>& names,
                      const std::vector<RecordScore>& scores) {
  out << "record,sample,seconds,error,annotation\n" << std::fixed << std::setprecision(3);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!scores[i].failure.empty()) continue;  // reported on stderr; nothing was detected
    for (const DetectionError& e : scores[i].detection_errors)
      out << names[i] << ',' << e.sample << ',' << double(e.sample) / scores[i].sampling_hz << ','
          << (e.missed ? "missed" : "false") << ','
          << (e.missed ? wfdb::annotation_mnemonic(e.code) : "") << '\n';
  }
  if (!out.flush()) throw ConfigError("--errors {}: writing failed", path);
}

// What the detector reads of a record, and the reference annotations it is scored against, at
// one sampling rate.
struct DetectionInput {
  std::vector<std::vector<float>> leads;  // physical units; the first is the one a lead names
  std::vector<Annotation> annotations;
  double sampling_hz = 0;
};

// Lead `lead` of r, or (lead < 0) the first and every other lead as long as it, as beat-vq with
// detect_all_leads reads them; with rate_hz > 0 and not the record's own rate, those leads
// resampled to it and the annotations moved with them.
DetectionInput detection_input(Record r, int lead, double rate_hz, const std::string& annotator) {
  if (r.digital.empty() || r.digital[0].empty())
    throw DataError("no signal samples to detect beats on (annotation-only record?)");
  // Without reference beats every detection would count as false: a wrong annotator, not a
  // detector that found nothing right.
  if (std::none_of(r.annotations.begin(), r.annotations.end(),
                   [](const Annotation& a) { return is_beat_code(a.code); }))
    throw DataError(
        "no reference beat in {}.{} (missing, or rhythm annotations only): nothing to score "
        "against; name the annotation file that holds the beats with --annotator",
        r.name, annotator);
  DetectionInput in;
  if (lead < 0) {
    in.leads = r.physical_leads(0);
  } else {
    if (size_t(lead) >= r.digital.size())
      throw DataError("has {} lead(s); --lead {} is not one of them", r.digital.size(), lead);
    in.leads.push_back(r.physical(lead));
  }
  in.annotations = std::move(r.annotations);
  in.sampling_hz = r.sampling_hz;
  if (rate_hz > 0.0 && rate_hz != r.sampling_hz) {
    for (auto& x : in.leads) x = dsp::resample_to_rate(x, r.sampling_hz, rate_hz);
    const double ratio = rate_hz / r.sampling_hz;
    for (Annotation& a : in.annotations) a.sample = std::llround(double(a.sample) * ratio);
    in.sampling_hz = rate_hz;
  }
  return in;
}

RecordScore score_record(const std::string& dir, const std::string& name,
                         const QrsEvalOptions& options) {
  RecordScore s;
  try {
    const DetectionInput r =
        detection_input(wfdb::read_record(dir, name, {options.annotator, true, true}), options.lead,
                        options.rate_hz, options.annotator);
    const std::vector<int64_t> detected =
        dsp::detect_qrs(lead_pointers(r.leads), r.leads[0].size(), r.sampling_hz);
    const int64_t window = dsp::match_window_samples(r.sampling_hz);
    s.sampling_hz = r.sampling_hz;
    // One pairing gives both the listing and the counts, as EC57 compares (VF episodes left out).
    const dsp::BeatComparison comparison = dsp::compare_beats(r.annotations, detected, window);
    s.counts = comparison.counts;
    s.vf_reference = comparison.vf_reference;
    s.vf_detected = comparison.vf_detected;
    s.detection_errors = detection_errors(r.annotations, comparison);
    // Ectopic beats are what a detector tuned on normal ones misses: their sensitivity alone.
    // The other beats are dropped, the non-beat annotations (VF marks among them) kept.
    std::vector<Annotation> ventricular;
    for (const Annotation& a : r.annotations)
      if (!is_beat_code(a.code) || aami_class(a.code) == BeatClass::kV) ventricular.push_back(a);
    s.ventricular = dsp::compare_beats(ventricular, detected, window).counts;
    s.ventricular.fp = 0;
  } catch (const Error& e) {
    s.failure = e.what();
  }
  return s;
}

double percent(double fraction) { return 100.0 * fraction; }

// The lowest rate the detector was made and tested for (the synthetic ectopy grid, DS1 resampled).
constexpr double kLowestRateHz = 128.0;

}  // namespace

int qrs_eval_command(const std::string& dir, const std::vector<std::string>& records,
                     const QrsEvalOptions& options) {
  const std::string& errors_csv = options.errors_csv;
  const int threads = options.threads > 0 ? options.threads
                                          : int(std::max(1u, std::thread::hardware_concurrency()));
  if (options.rate_hz < 0.0)
    throw ConfigError("--rate {}: give a sampling rate in Hz, or 0 for each record's own",
                      options.rate_hz);
  if (options.annotator.empty() || options.annotator.front() == '.' ||
      options.annotator.find('/') != std::string::npos)
    throw ConfigError(
        "--annotator '{}': give the annotation file's suffix alone, as WFDB names annotators "
        "(atr, qrs, ...)",
        options.annotator);
  if (options.rate_hz > 0.0 && options.rate_hz < kLowestRateHz)
    std::fprintf(stderr,
                 "qrs-eval: --rate %g: below %g Hz a QRS complex spans only a few samples; the "
                 "detector was made for %g to 1000 Hz\n",
                 options.rate_hz, kLowestRateHz, kLowestRateHz);
  const std::vector<std::string> names = records.empty() ? wfdb::list_records(dir) : records;
  if (names.empty())
    throw ConfigError("{}: no WFDB records (no RECORDS file and no .hea files)", dir);
  std::ofstream errors_out;
  if (!errors_csv.empty()) {
    errors_out.open(errors_csv);
    if (!errors_out)
      throw ConfigError("--errors {}: cannot be written (check that its folder exists)",
                        errors_csv);
  }
  std::vector<RecordScore> scores(names.size());
  parallel_for(names.size(), threads,
               [&](size_t i) { scores[i] = score_record(dir, names[i], options); });

  if (options.rate_hz > 0.0)
    std::printf(
        "scored at %g Hz: records at another rate resampled to it, their annotations moved\n",
        options.rate_hz);
  std::printf("%-10s %8s %6s %6s %7s %7s %6s %7s\n", "record", "TP", "FN", "FP", "Se", "+P", "V",
              "V Se");
  dsp::MatchCounts gross, gross_v;
  int64_t vf_reference = 0, vf_detected = 0;
  int failed = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const RecordScore& s = scores[i];
    if (!s.failure.empty()) {
      std::fprintf(stderr, "qrs-eval: %s/%s: %s\n", dir.c_str(), names[i].c_str(),
                   s.failure.c_str());
      ++failed;
      continue;
    }
    const dsp::MatchCounts& c = s.counts;
    const dsp::MatchCounts& v = s.ventricular;
    std::printf("%-10s %8lld %6lld %6lld %7.2f %7.2f %6lld %7.2f\n", names[i].c_str(),
                (long long)c.tp, (long long)c.fn, (long long)c.fp, percent(c.sensitivity()),
                percent(c.positive_predictivity()), (long long)(v.tp + v.fn),
                percent(v.sensitivity()));
    gross += c;
    gross_v += v;
    vf_reference += s.vf_reference;
    vf_detected += s.vf_detected;
  }
  if (vf_reference + vf_detected > 0)
    std::printf(
        "not scored, inside ventricular flutter or fibrillation episodes (as EC57 and bxb): %lld "
        "reference beats, %lld detections\n",
        (long long)vf_reference, (long long)vf_detected);
  std::printf("gross TP=%lld FN=%lld FP=%lld Se=%.2f +P=%.2f V=%lld V_Se=%.2f\n",
              (long long)gross.tp, (long long)gross.fn, (long long)gross.fp,
              percent(gross.sensitivity()), percent(gross.positive_predictivity()),
              (long long)(gross_v.tp + gross_v.fn), percent(gross_v.sensitivity()));
  if (!errors_csv.empty()) write_errors_csv(errors_out, errors_csv, names, scores);
  if (failed)
    std::fprintf(stderr, "qrs-eval: %d of %zu record(s) could not be scored\n", failed,
                 names.size());
  return failed ? 1 : 0;
}

}  // namespace hlm
