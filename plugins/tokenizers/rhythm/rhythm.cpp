// The `rhythm` tokenizer (spec/tokenizers.md): one token per heartbeat, the pair (AAMI beat
// class, bin of the RR interval over the running median RR), from annotation files alone or
// from beats found by the QRS detector.
#include <algorithm>
#include <string>

#include "hlm/dsp/beat_match.h"
#include "hlm/dsp/qrs.h"
#include "hlm/errors.h"
#include "hlm/plugin.h"
#include "hlm/tokenizer.h"
#include "hlm/util.h"
#include "rr_bins.h"

namespace {

using hlm::rhythm::RrBins;

// Bumped whenever the beats or the binning change for the same parameters.
constexpr const char* kMethodVersion = "1";

enum class Source { kAnnotations, kDetected, kAuto };

Source parse_source(const std::string& s) {
  if (s == "annotations") return Source::kAnnotations;
  if (s == "detected") return Source::kDetected;
  if (s == "auto") return Source::kAuto;
  throw hlm::ConfigError("rhythm: source='{}', expected 'annotations', 'detected' or 'auto'{}", s,
                         hlm::did_you_mean(s, {"annotations", "detected", "auto"}));
}

bool has_beat_annotations(const hlm::Record& record) {
  return std::any_of(record.annotations.begin(), record.annotations.end(),
                     [](const hlm::Annotation& a) { return hlm::is_beat_code(a.code); });
}

class Rhythm final : public hlm::Tokenizer {
 public:
  explicit Rhythm(const nlohmann::json& p)
      : source_name_(p.value("source", std::string("annotations"))),
        source_(parse_source(source_name_)),
        lead_(p.value("lead", 0)),
        detect_all_leads_(p.value("detect_all_leads", true)),
        median_window_(p.value("median_window", 8)),
        beat_classes_(p.value("beat_classes", true)),
        first_token_(p.value("first_token", int64_t(hlm::kFirstContentToken))),
        bins_(make_bins(p)) {
    const int bins = bins_.bins();
    const double lo = bins_.edges().front(), hi = bins_.edges().back();
    if (median_window_ < 1)
      throw hlm::ConfigError("rhythm: median_window={} must be >= 1", median_window_);
    if (lead_ < 0) throw hlm::ConfigError("rhythm: lead={} must be >= 0", lead_);
    if (first_token_ < int64_t(hlm::kFirstContentToken) || first_token_ > (int64_t(1) << 24))
      throw hlm::ConfigError(
          "rhythm: first_token={} must be {} (the first after the special "
          "tokens) to 2^24",
          first_token_, hlm::kFirstContentToken);
    // Everything that changes the tokens, in a canonical order (nlohmann sorts object keys).
    nlohmann::json id = {{"method", kMethodVersion},
                         {"source", source_name_},
                         {"lead", lead_},
                         {"detect_all_leads", detect_all_leads_},
                         {"bins", bins},
                         {"rr_min_ratio", lo},
                         {"rr_max_ratio", hi},
                         {"median_window", median_window_}};
    // Only when off, so the tokens of every earlier configuration keep their identity.
    if (!beat_classes_) id["beat_classes"] = false;
    if (first_token_ != int64_t(hlm::kFirstContentToken)) id["first_token"] = first_token_;
    identity_ = "rhythm:" + hlm::hex64(hlm::fnv1a64(id.dump()));
  }

  uint32_t vocab_size() const override {
    return uint32_t(first_token_) + uint32_t(hlm::kBeatClassCount * bins_.bins());
  }
  std::string identity() const override { return identity_; }

  hlm::Beats extract(const hlm::Record& record) const override {
    hlm::Beats b;
    b.record = record.name;
    b.sampling_hz = record.sampling_hz;
    const bool annotated = source_ == Source::kAnnotations ||
                           (source_ == Source::kAuto && has_beat_annotations(record));
    std::vector<hlm::BeatClass> classes;
    if (annotated) {
      for (const hlm::Annotation& a : record.annotations)
        if (hlm::is_beat_code(a.code)) {
          b.positions.push_back(a.sample);
          b.labels.push_back(uint8_t(hlm::aami_class(a.code)));
        }
      if (b.positions.empty())
        throw hlm::DataError(
            "rhythm: record '{}' ({}) has no beat annotations (HINT: source: detected or auto)",
            record.name, record.source);
      if (!std::is_sorted(b.positions.begin(), b.positions.end())) sort_by_position(b);
      // A beat code of no AAMI class (a flutter wave '!', B, n, r, ?) keeps no label, and its
      // token takes Q's row, as before those codes left the Q class: the vocabulary is unchanged.
      if (beat_classes_)
        for (uint8_t label : b.labels)
          classes.push_back(label < hlm::kBeatClassCount ? hlm::BeatClass(label)
                                                         : hlm::BeatClass::kQ);
    } else {
      b.positions = detect(record);
      b.labels = hlm::dsp::label_beats(b.positions, record.annotations,
                                       hlm::dsp::match_window_samples(record.sampling_hz));
    }
    // The detector gives no beat class, and without beat_classes none is read: those beats share
    // N's row, so the vocabulary is the same in every mode and the RR bin carries the rhythm (as
    // an RR-interval detector reads a database whose beats carry no class, afdb's .qrs). Their
    // labels stay for the tasks that score beat classes.
    if (classes.empty()) classes.assign(b.positions.size(), hlm::BeatClass::kN);
    b.rr_seconds.resize(b.size(), 0.0f);
    for (size_t i = 1; i < b.size(); ++i)
      b.rr_seconds[i] = float(double(b.positions[i] - b.positions[i - 1]) / record.sampling_hz);
    const std::vector<double> ratios = hlm::rhythm::rr_ratios(b.positions, median_window_);
    b.tokens.resize(b.size());
    for (size_t i = 0; i < b.size(); ++i)
      b.tokens[i] = hlm::rhythm::rhythm_token(classes[i], bins_.bin(ratios[i]), bins_.bins(),
                                              uint32_t(first_token_));
    return b;
  }

  // Nothing to learn: extract() already knows every token, so assign() only checks them.
  void assign(hlm::Beats& beats) const override {
    if (beats.tokens.size() != beats.size())
      throw hlm::InternalError(
          "rhythm: assign() on beats not made by rhythm's extract() (record '{}')", beats.record);
  }

 private:
  static RrBins make_bins(const nlohmann::json& p) {
    const int bins = p.value("bins", 16);
    const double lo = p.value("rr_min_ratio", 0.5), hi = p.value("rr_max_ratio", 2.0);
    if (bins < 1 || bins > 1000)
      throw hlm::ConfigError("rhythm: bins={} must be in [1, 1000]", bins);
    if (!(lo > 0.0 && hi > lo))
      throw hlm::ConfigError(
          "rhythm: rr_min_ratio={:f}, rr_max_ratio={:f}: need 0 < rr_min_ratio < rr_max_ratio", lo,
          hi);
    return RrBins(bins, lo, hi);
  }

  std::vector<int64_t> detect(const hlm::Record& record) const {
    if (const std::string missing = record.missing_samples(); !missing.empty())
      throw hlm::DataError(
          "rhythm: record '{}' ({}): {} (or take its beats from its annotations: source: "
          "annotations)",
          record.name, record.source, missing);
    if (lead_ >= int(record.digital.size()))
      throw hlm::DataError(
          "rhythm: record '{}' ({}) has {} signal(s) with samples; lead={}{}", record.name,
          record.source, record.digital.size(), lead_,
          (record.digital.empty() ? " (HINT: source: annotations for annotation-only records)"
                                  : " (HINT: set the tokenizer's lead parameter)"));
    const std::vector<float> x = record.physical(lead_);
    std::vector<std::vector<float>> others;
    std::vector<const float*> leads{x.data()};  // the first lead is the fiducial one
    if (detect_all_leads_)
      for (int k = 0; k < int(record.digital.size()); ++k)
        if (k != lead_ && record.digital[size_t(k)].size() == x.size()) {
          others.push_back(record.physical(k));
          leads.push_back(others.back().data());
        }
    return hlm::dsp::detect_qrs(leads, x.size(), record.sampling_hz);
  }

  static void sort_by_position(hlm::Beats& b) {
    std::vector<size_t> order(b.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return b.positions[x] < b.positions[y]; });
    std::vector<int64_t> positions(b.size());
    std::vector<uint8_t> labels(b.size());
    for (size_t i = 0; i < order.size(); ++i)
      positions[i] = b.positions[order[i]], labels[i] = b.labels[order[i]];
    b.positions.swap(positions);
    b.labels.swap(labels);
  }

  std::string source_name_;
  Source source_;
  int lead_ = 0;
  bool detect_all_leads_ = true;
  int median_window_ = 8;
  bool beat_classes_ = true;
  int64_t first_token_ = hlm::kFirstContentToken;
  RrBins bins_;
  std::string identity_;
};

hlm::Tokenizer* make_rhythm(const nlohmann::json& params) { return new Rhythm(params); }

const hlm_param_decl kRhythmParams[] = {
    {"source", "string", "\"annotations\"",
     "where beats come from: \"annotations\" (reference beat annotations, class from their code), "
     "\"detected\" (QRS detector, class N) or \"auto\" (annotations when the record has beat "
     "annotations, else detected)"},
    {"lead", "int[0,]", "0", "signal whose R peaks are the beat positions (source detected)"},
    {"detect_all_leads", "bool", "true", "detect on all leads together (source detected)"},
    {"bins", "int[1,1000]", "16",
     "RR-ratio bins (vocabulary = 5 classes x bins + 4 special tokens)"},
    {"rr_min_ratio", "float(0,]", "0.5",
     "lower end of the log-spaced bins; smaller ratios go to bin 0"},
    {"rr_max_ratio", "float(0,]", "2.0", "upper end of the bins; larger ratios go to the last bin"},
    {"median_window", "int[1,]", "8", "RR intervals in the running median the ratio is taken to"},
    {"beat_classes", "bool", "true",
     "false: every token in class N's row, the RR bin alone, whatever the source; the beats' "
     "labels are kept"},
    {"first_token", "int[4,16777216]", "4",
     "id of the first rhythm token (class N, bin 0); above 4 the ids below it are left to "
     "another tokenizer's tokens, so that one model reads both (workflows/foundation.yaml)"},
};

}  // namespace

HLM_PLUGIN(hlm::Tokenizer, "rhythm", "1.0.0",
           "heartbeat tokens: AAMI beat class x RR interval over the running median RR",
           kRhythmParams, make_rhythm)
