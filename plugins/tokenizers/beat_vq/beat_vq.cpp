// The `beat-vq` tokenizer (spec/tokenizers.md): filter one lead, detect R peaks, cut 64-point
// beat windows, and give each beat the index of its nearest k-means code as its token.
// With `shape: relative` a beat is described instead by how it differs from its own record:
// its RR features (hlm/dsp/rr_features.h) and its window against the record's template
// (hlm/dsp/beat_morphology.h), so a code means the same in every patient. With
// `template_descriptors` each beat also carries numbers describing its template
// (hlm/dsp/template_descriptors.h) into the token store, for heads to read; with
// `shape_descriptors` its window and its window minus the template, resampled
// (hlm/dsp/beat_shape_descriptors.h); with `p_wave_descriptors` its P wave against its record's
// late beats' (hlm/dsp/p_wave_reference.h). With `align_max_shift_s` each R peak is first moved
// to where its QRS matches its record's template best (hlm/dsp/fiducial_alignment.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "hlm/dsp/beat_match.h"
#include "hlm/dsp/beat_morphology.h"
#include "hlm/dsp/beat_shape_descriptors.h"
#include "hlm/dsp/beat_window.h"
#include "hlm/dsp/fiducial_alignment.h"
#include "hlm/dsp/filter.h"
#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/p_wave_reference.h"
#include "hlm/dsp/qrs.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/dsp/template_descriptors.h"
#include "hlm/errors.h"
#include "hlm/plugin.h"
#include "hlm/tokenizer.h"
#include "hlm/util.h"

namespace {

using hlm::dsp::Codebook;

constexpr const char* kMethodVersion = "1";
// Values per beat with shape relative: RR features, then the shape against the template.
constexpr int kRelativeFeatures = hlm::kRrFeatureCount + hlm::kMorphologyFeatureCount;

// Two beat-major tables of the same beats joined: each beat's a_width values of `a`, then its
// b_width values of `b`.
std::vector<float> side_by_side(const std::vector<float>& a, int a_width,
                                const std::vector<float>& b, int b_width) {
  const size_t n = b.size() / size_t(b_width), aw = size_t(a_width), bw = size_t(b_width);
  std::vector<float> out;
  out.reserve(a.size() + b.size());
  for (size_t i = 0; i < n; ++i) {
    out.insert(out.end(), a.begin() + ptrdiff_t(i * aw), a.begin() + ptrdiff_t((i + 1) * aw));
    out.insert(out.end(), b.begin() + ptrdiff_t(i * bw), b.begin() + ptrdiff_t((i + 1) * bw));
  }
  return out;
}

class BeatVq final : public hlm::Tokenizer {
 public:
  explicit BeatVq(const nlohmann::json& p) {
    codes_ = p.value("codes", 500);
    lead_ = p.value("lead", 0);
    lead_names_ = p.value("lead_names", std::vector<std::string>{});
    window_.before_seconds = p.value("window_before_s", 0.25);
    window_.after_seconds = p.value("window_after_s", 0.40);
    window_.points = p.value("points", 64);
    kmeans_.codes = codes_;
    kmeans_.sample_size = p.value("sample_beats", int64_t{200000});
    kmeans_.max_iterations = p.value("iters", 25);
    kmeans_.seed = p.value("seed", uint64_t{0});
    kmeans_.threads = p.value("threads", 0);
    detect_all_leads_ = p.value("detect_all_leads", false);
    const std::string baseline = p.value("baseline", std::string("highpass"));
    if (baseline != "highpass" && baseline != "median")
      throw hlm::ConfigError("beat-vq: baseline='{}', expected 'highpass' or 'median'{}", baseline,
                             hlm::did_you_mean(baseline, {"highpass", "median"}));
    clean_.baseline = baseline == "median" ? hlm::dsp::BaselineMethod::kMedianPair
                                           : hlm::dsp::BaselineMethod::kHighPass;
    clean_.lowpass_hz = p.value("lowpass_hz", 40.0);
    const std::string shape = p.value("shape", std::string("window"));
    if (shape != "window" && shape != "relative")
      throw hlm::ConfigError("beat-vq: shape='{}', expected 'window' or 'relative'{}", shape,
                             hlm::did_you_mean(shape, {"window", "relative"}));
    relative_ = shape == "relative";
    align_max_shift_s_ = p.value("align_max_shift_s", 0.0);
    if (!(align_max_shift_s_ >= 0 && align_max_shift_s_ <= kMaxAlignShiftSeconds))
      throw hlm::ConfigError(
          "beat-vq: align_max_shift_s={} must be from 0 (off) to {} s (HINT: 0.05 covers an R "
          "peak marked on its S wave)",
          align_max_shift_s_, kMaxAlignShiftSeconds);
    const std::string template_beats = p.value("template_beats", std::string("all"));
    if (template_beats != "all" && template_beats != "timely")
      throw hlm::ConfigError("beat-vq: template_beats='{}', expected 'all' or 'timely'{}",
                             template_beats, hlm::did_you_mean(template_beats, {"all", "timely"}));
    timely_templates_ = template_beats == "timely";
    descriptors_ = p.value("template_descriptors", false);
    shape_points_ = p.value("shape_descriptors", 0);
    shape_leads_ = p.value("shape_descriptor_leads", 1);
    p_waves_ = p.value("p_wave_descriptors", false);
    if (p_waves_ && !hlm::covers_p_wave(window_))
      throw hlm::ConfigError(
          "beat-vq: p_wave_descriptors read the P wave from {} s to {} s before the R peak, at 3 "
          "points or more; window_before_s={} and points={} do not (HINT: window_before_s: 0.25, "
          "points: 64)",
          -hlm::kPWaveSeconds[0], -hlm::kPWaveSeconds[1], window_.before_seconds, window_.points);
    if (shape_leads_ < 1 || (shape_leads_ > 1 && shape_points_ == 0))
      throw hlm::ConfigError(
          "beat-vq: shape_descriptor_leads={} must be 1 or more, and above 1 only with "
          "shape_descriptors (here {}) (HINT: shape_descriptors: 32, shape_descriptor_leads: 2)",
          shape_leads_, shape_points_);
    if (shape_points_ != 0 && (shape_points_ < 2 || shape_points_ > window_.points))
      throw hlm::ConfigError(
          "beat-vq: shape_descriptors={} must be 0 (off) or from 2 to points ({}) (HINT: 16 or "
          "32 points keep a beat's waves)",
          shape_points_, window_.points);
    if (shape_points_ && !hlm::covers_template_descriptors(window_))
      throw hlm::ConfigError(
          "beat-vq: shape_descriptors scale the beat by its template's QRS, read from {} s "
          "before the R peak; window_before_s={} and window_after_s={} must reach {} s and {} s "
          "(HINT: widen the window or leave shape_descriptors off)",
          -hlm::kIsoelectricSeconds[0], window_.before_seconds, window_.after_seconds,
          -hlm::kPWaveSeconds[0], hlm::kTWaveSeconds[1]);
    if (descriptors_ && window_.points < 3)
      throw hlm::ConfigError(
          "beat-vq: template_descriptors need windows of at least 3 points (points={}) (HINT: "
          "raise points, 64 by default)",
          window_.points);
    if (descriptors_ && !hlm::covers_template_descriptors(window_))
      throw hlm::ConfigError(
          "beat-vq: template_descriptors read the beat from {} s before the R peak to {} s after "
          "it; window_before_s={} and window_after_s={} do not reach that far (HINT: widen the "
          "window or leave template_descriptors off)",
          -hlm::kPWaveSeconds[0], hlm::kTWaveSeconds[1], window_.before_seconds,
          window_.after_seconds);
    if (codes_ < 1 || codes_ > 65000)
      throw hlm::ConfigError("beat-vq: codes={} must be in [1, 65000]", codes_);
    if (lead_ < 0) throw hlm::ConfigError("beat-vq: lead={} must be >= 0", lead_);
    if (window_.points < 2 || window_.before_seconds < 0 || window_.after_seconds < 0 ||
        window_.before_seconds + window_.after_seconds <= 0)
      throw hlm::ConfigError(
          "beat-vq: points must be >= 2 and the window (window_before_s + "
          "window_after_s) longer than 0");
    if (kmeans_.sample_size < 1 || kmeans_.max_iterations < 0)
      throw hlm::ConfigError("beat-vq: sample_beats must be >= 1 and iters >= 0");
    // Everything that changes the tokens, in a canonical order (nlohmann sorts object keys);
    // "method" changes whenever the filters, the detector or the windows do.
    nlohmann::json id = {{"method", kMethodVersion},
                         {"codes", codes_},
                         {"lead", lead_},
                         {"points", window_.points},
                         {"window_before_s", window_.before_seconds},
                         {"window_after_s", window_.after_seconds},
                         {"sample_beats", kmeans_.sample_size},
                         {"iters", kmeans_.max_iterations},
                         {"seed", kmeans_.seed},
                         {"baseline", baseline},
                         {"lowpass_hz", clean_.lowpass_hz},
                         {"detect_all_leads", detect_all_leads_}};
    // Named only when not the default, so stores and codebooks made before it keep their
    // identity.
    if (relative_) id["shape"] = "relative";
    if (!lead_names_.empty()) id["lead_names"] = lead_names_;
    if (align_max_shift_s_ > 0) id["align_max_shift_s"] = align_max_shift_s_;
    if (timely_templates_) id["template_beats"] = template_beats;
    params_text_ = id.dump();
    const std::string codebook = p.value("codebook", std::string());
    if (!codebook.empty()) load_state(codebook);
  }

  uint32_t vocab_size() const override { return uint32_t(codes_) + hlm::kFirstContentToken; }

  std::string identity() const override {
    uint64_t h = hlm::fnv1a64(params_text_);
    if (!codebook_.empty())
      h = hlm::fnv1a64(params_text_ + hlm::hex64(hlm::dsp::codebook_hash(codebook_)));
    return "beat-vq:" + hlm::hex64(h);
  }

  hlm::Beats extract(const hlm::Record& record) const override {
    const int lead = lead_of(record);
    const double fs = record.sampling_hz;
    // Detection reads the tokenized lead, as the spec says; with detect_all_leads every lead
    // of the same length joins in (a second lead rescues noisy stretches, at
    // about 2.5x the detection time in `hlm bench tokenize`). R peaks refer to the tokenized lead,
    // which comes first.
    std::vector<std::vector<float>> all;
    if (detect_all_leads_)
      all = record.physical_leads(lead);
    else
      all.push_back(record.physical(lead));  // moved in, where {physical(lead)} would copy
    const std::vector<float>& x = all.front();
    const size_t n = x.size();
    const std::vector<float> clean = hlm::dsp::clean_ecg(x.data(), n, fs, clean_);
    const std::vector<int64_t> peaks = hlm::dsp::align_r_peaks(
        clean.data(), n, fs, hlm::dsp::detect_qrs(hlm::lead_pointers(all), n, fs),
        align_max_shift_s_, timely_templates_);

    hlm::Beats b;
    b.record = record.name;
    b.sampling_hz = fs;
    b.feature_dim = window_.points;
    const std::vector<size_t> kept =
        hlm::dsp::cut_beat_windows(clean.data(), n, fs, peaks, window_, &b.features);
    for (size_t k : kept) {
      b.positions.push_back(peaks[k]);
      b.rr_seconds.push_back(k > 0 ? float(double(peaks[k] - peaks[k - 1]) / fs) : 0.0f);
    }
    b.labels =
        hlm::dsp::label_beats(b.positions, record.annotations, hlm::dsp::match_window_samples(fs));
    mark_invalid_windows(record.digital[lead], b);
    if (!relative_ && !descriptors_ && !shape_points_ && !p_waves_) return b;
    std::vector<int64_t> row(b.size());
    for (size_t i = 0; i < b.size(); ++i)
      row[i] = std::isnan(b.features[i * size_t(window_.points)]) ? -1 : int64_t(i);
    const std::vector<bool> left_out = template_left_out(b);
    const std::vector<float> templates =
        hlm::local_templates(b.features.data(), window_.points, row, left_out);
    if (descriptors_)
      b.descriptors = hlm::template_descriptors(b.features.data(), window_, row, templates);
    if (shape_points_)
      b.descriptors = side_by_side(
          b.descriptors, template_width(),
          hlm::beat_shape_descriptors(b.features.data(), window_, row, templates, shape_points_),
          shape_width());
    const std::vector<size_t> late =
        p_waves_ ? hlm::late_beats(b.rr_seconds, row) : std::vector<size_t>();
    std::vector<float> p_waves;
    if (p_waves_) p_waves = hlm::late_p_wave_correlations(b.features.data(), window_, row, late);
    if (shape_leads_ > 1)
      add_other_lead_shapes(record, lead, all, peaks, kept, row, left_out, late, p_waves, b);
    if (p_waves_)
      b.descriptors = side_by_side(b.descriptors, descriptor_width(), p_waves, p_wave_leads());
    if (relative_) describe_relative(b, row, templates);
    return b;
  }

  bool needs_fit() const override { return codebook_.empty(); }

  // The template descriptors, the shape descriptors, then the P wave's (extract()'s order).
  std::vector<std::string> descriptor_names() const override {
    std::vector<std::string> names;
    if (descriptors_)
      names.assign(std::begin(hlm::kTemplateDescriptorNames),
                   std::end(hlm::kTemplateDescriptorNames));
    if (shape_points_) {
      const auto shape = hlm::beat_shape_descriptor_names(window_, shape_points_);
      names.insert(names.end(), shape.begin(), shape.end());
      for (int other = 1; other < shape_leads_; ++other)
        for (const std::string& name : shape)
          names.push_back(name + ", lead " + std::to_string(other + 1));
    }
    if (p_waves_)
      for (int lead = 0; lead < p_wave_leads(); ++lead)
        names.push_back(hlm::late_p_wave_descriptor_name(lead));
    return names;
  }

  void fit(const std::vector<const hlm::Beats*>& sample) override {
    std::vector<const float*> rows;
    for (const hlm::Beats* b : sample) {
      if (b->feature_dim != feature_dim()) continue;
      for (size_t i = 0; i < b->size(); ++i)
        if (!std::isnan(b->features[i * b->feature_dim]))
          rows.push_back(&b->features[i * b->feature_dim]);
    }
    if (rows.empty())
      throw hlm::DataError("beat-vq: no beats to fit the codebook on ({} record(s) given)",
                           sample.size());
    codebook_ = hlm::dsp::kmeans_fit(rows, feature_dim(), kmeans_);
    packed_ = hlm::dsp::PackedCodebook(codebook_);
  }

  void save_state(const std::string& path) const override {
    if (codebook_.empty()) throw hlm::InternalError("beat-vq: save_state({}) before fit()", path);
    hlm::dsp::save_codebook(codebook_, path, "beat-vq " + params_text_);
  }

  void load_state(const std::string& path) override {
    Codebook cb = hlm::dsp::load_codebook(path);
    if (cb.dim != feature_dim() || cb.codes() != codes_)
      throw hlm::CheckpointError(
          "{}: codebook of {} codes x {} values, but the tokenizer has codes={} and {} values per "
          "beat (points={}, shape={}) (HINT: use the parameters it was trained with)",
          path, cb.codes(), cb.dim, codes_, feature_dim(), window_.points,
          relative_ ? "relative" : "window");
    codebook_ = std::move(cb);
    packed_ = hlm::dsp::PackedCodebook(codebook_);
  }

  void assign(hlm::Beats& beats) const override {
    if (codebook_.empty())
      throw hlm::InternalError("beat-vq: assign() before fit() or load_state()");
    if (beats.size() && beats.feature_dim != codebook_.dim)
      throw hlm::DataError("beat-vq: record '{}' has {} features per beat, the codebook {}",
                           beats.record, beats.feature_dim, codebook_.dim);
    std::vector<uint32_t> index(beats.size());
    packed_.assign(beats.features.data(), beats.size(), index.data());
    beats.tokens.resize(beats.size());
    for (size_t i = 0; i < index.size(); ++i)
      beats.tokens[i] = std::isnan(beats.features[i * beats.feature_dim])
                            ? uint32_t(hlm::kUnk)
                            : index[i] + hlm::kFirstContentToken;
  }

 private:
  int feature_dim() const { return relative_ ? kRelativeFeatures : window_.points; }

  // Descriptor columns per beat: the template descriptors', one lead's shape descriptors',
  // and all of these before the P wave's (extract()'s order).
  int template_width() const { return descriptors_ ? hlm::kTemplateDescriptorCount : 0; }
  int shape_width() const {
    return shape_points_ ? hlm::beat_shape_descriptor_count(shape_points_) : 0;
  }
  int descriptor_width() const { return template_width() + shape_leads_ * shape_width(); }

  // The leads p_wave_descriptors describe: those of the shape descriptors.
  int p_wave_leads() const { return p_waves_ ? (shape_points_ ? shape_leads_ : 1) : 0; }

  // The signal to tokenize: the first of lead_names the record's header names, else `lead`.
  // Databases do not keep one lead order: MIT-BIH record 114 has V5 first and MLII second,
  // where its other records have MLII first, and a code learnt on one lead means something
  // else on another.
  int lead_of(const hlm::Record& record) const {
    const int signals = static_cast<int>(record.digital.size());
    for (const std::string& name : lead_names_)
      for (int k = 0; k < signals && k < static_cast<int>(record.signals.size()); ++k)
        if (record.signals[size_t(k)].description == name) return k;
    if (const std::string missing = record.missing_samples(); !missing.empty())
      throw hlm::DataError("beat-vq: record '{}' ({}): {}", record.name, record.source, missing);
    if (lead_ >= signals) {
      std::string names;
      for (const std::string& name : lead_names_) names += (names.empty() ? "" : ", ") + name;
      throw hlm::DataError(
          "beat-vq: record '{}' ({}) has {} signal(s) with samples; lead={}{} (HINT: "
          "set the tokenizer's lead or lead_names parameter)",
          record.name, record.source, signals, lead_,
          names.empty() ? std::string() : " and none named " + names);
    }
    return lead_;
  }

  // shape_descriptor_leads: the shape descriptors of the next shape_leads_ - 1 signals of the
  // record's length (in the header's order, the tokenized one skipped), cut at the same R
  // peaks against their own templates, after the tokenized lead's. What tells a beat apart can
  // show on one lead only: a PVC's changed axis, or a P wave hidden on one projection. A beat
  // whose window is invalid on either lead gets that lead's template shape (no difference)
  // and is left out of its neighbours' templates there. `detected` holds the leads the
  // detector read (physical_leads' order), so they are not converted again. With
  // p_wave_descriptors each lead's P wave against the `late` beats' (hlm/dsp/p_wave_reference.h)
  // joins `p_waves`, one column per lead, beat-major.
  void add_other_lead_shapes(const hlm::Record& record, int lead,
                             const std::vector<std::vector<float>>& detected,
                             const std::vector<int64_t>& peaks, const std::vector<size_t>& kept,
                             const std::vector<int64_t>& row, const std::vector<bool>& left_out,
                             const std::vector<size_t>& late, std::vector<float>& p_waves,
                             hlm::Beats& b) const {
    const std::vector<int> others = record.other_leads(lead);
    if (static_cast<int>(others.size()) + 1 < shape_leads_)
      throw hlm::DataError(
          "beat-vq: record '{}' ({}) has {} signal(s) of its length; shape_descriptor_leads={} "
          "(HINT: leave records with fewer leads out, or lower shape_descriptor_leads)",
          record.name, record.source, others.size() + 1, shape_leads_);
    for (int used = 1; used < shape_leads_; ++used) {
      const int signal = others[size_t(used - 1)];
      std::vector<float> converted;
      if (size_t(used) >= detected.size()) converted = record.physical(signal);
      const std::vector<float>& x =
          size_t(used) < detected.size() ? detected[size_t(used)] : converted;
      const std::vector<float> clean =
          hlm::dsp::clean_ecg(x.data(), x.size(), b.sampling_hz, clean_);
      std::vector<float> windows;
      // Same peaks and record length, so the same beats keep a window.
      if (hlm::dsp::cut_beat_windows(clean.data(), clean.size(), b.sampling_hz, peaks, window_,
                                     &windows) != kept)
        throw hlm::InternalError("beat-vq: record '{}': signal {} kept other beats than signal {}",
                                 record.name, signal, lead);
      std::vector<int64_t> row_here = row;
      const std::vector<bool> invalid = invalid_windows(record.digital[size_t(signal)], b);
      for (size_t i = 0; i < row_here.size(); ++i)
        if (invalid[i]) row_here[i] = -1;
      const std::vector<float> templates =
          hlm::local_templates(windows.data(), window_.points, row_here, left_out);
      b.descriptors = side_by_side(
          b.descriptors, template_width() + used * shape_width(),
          hlm::beat_shape_descriptors(windows.data(), window_, row_here, templates, shape_points_),
          shape_width());
      if (p_waves_)
        p_waves =
            side_by_side(p_waves, used,
                         hlm::late_p_wave_correlations(windows.data(), window_, row_here, late), 1);
    }
  }

  // template_beats timely: the premature beats, to leave out of templates; none otherwise.
  std::vector<bool> template_left_out(const hlm::Beats& b) const {
    if (!timely_templates_) return {};
    return hlm::premature_beats(std::vector<double>(b.rr_seconds.begin(), b.rr_seconds.end()));
  }

  // shape relative: replaces each beat's window by its RR features and its window against
  // its template. A beat whose window is invalid (row -1) stays NaN (kUnk) and is left out
  // of its neighbours' templates.
  void describe_relative(hlm::Beats& b, const std::vector<int64_t>& row,
                         const std::vector<float>& templates) const {
    const size_t n = b.size();
    const auto rr = hlm::rr_features(b.rr_seconds.data(), n);
    const auto shape = hlm::relative_morphology(
        b.features.data(),
        hlm::beat_shape_layout(window_.points, window_.before_seconds, window_.after_seconds), row,
        templates);
    std::vector<float> out(n * kRelativeFeatures);
    for (size_t i = 0; i < n; ++i) {
      float* f = out.data() + i * kRelativeFeatures;
      std::copy_n(rr.begin() + ptrdiff_t(i * hlm::kRrFeatureCount), hlm::kRrFeatureCount, f);
      std::copy_n(shape.begin() + ptrdiff_t(i * hlm::kMorphologyFeatureCount),
                  hlm::kMorphologyFeatureCount, f + hlm::kRrFeatureCount);
      if (row[i] < 0) f[0] = std::nanf("");
    }
    b.features = std::move(out);
    b.feature_dim = kRelativeFeatures;
  }

  // A window that touches a sample the record marks invalid cannot be tokenized: its features
  // become NaN, fit() leaves it out and assign() gives it kUnk.
  void mark_invalid_windows(const std::vector<int32_t>& raw, hlm::Beats& b) const {
    const std::vector<bool> invalid = invalid_windows(raw, b);
    for (size_t k = 0; k < b.size(); ++k)
      if (invalid[k])
        std::fill_n(b.features.begin() + k * b.feature_dim, b.feature_dim, std::nanf(""));
  }

  // Per beat of `b`: whether its window touches a sample of `raw` the record marks invalid.
  std::vector<bool> invalid_windows(const std::vector<int32_t>& raw, const hlm::Beats& b) const {
    std::vector<bool> out(b.size(), false);
    if (!hlm::any_invalid(raw.data(), raw.size())) return out;
    std::vector<uint32_t> invalid(raw.size() + 1, 0);  // prefix counts
    for (size_t i = 0; i < raw.size(); ++i)
      invalid[i + 1] = invalid[i] + (raw[i] == hlm::kInvalidSample);
    const int64_t last = static_cast<int64_t>(raw.size()) - 1;
    for (size_t k = 0; k < b.size(); ++k) {
      const double r = double(b.positions[k]);
      const int64_t a =
          std::max<int64_t>(0, int64_t(std::floor(r - window_.before_seconds * b.sampling_hz)));
      const int64_t z =
          std::min(last, int64_t(std::ceil(r + window_.after_seconds * b.sampling_hz)));
      out[k] = invalid[z + 1] != invalid[a];
    }
    return out;
  }

  // Longer moves would reach the next wave (a P or T wave) rather than the QRS's other peak.
  static constexpr double kMaxAlignShiftSeconds = 0.1;
  int codes_ = 500, lead_ = 0, shape_points_ = 0, shape_leads_ = 1;
  std::vector<std::string> lead_names_;
  double align_max_shift_s_ = 0;
  bool detect_all_leads_ = false, relative_ = false, descriptors_ = false;
  bool timely_templates_ = false, p_waves_ = false;
  hlm::dsp::BeatWindowOptions window_;
  hlm::dsp::KmeansOptions kmeans_;
  hlm::dsp::CleanOptions clean_;
  std::string params_text_;
  Codebook codebook_;
  hlm::dsp::PackedCodebook packed_;  // codebook_ laid out for assign(), once per codebook
};

hlm::Tokenizer* make_beat_vq(const nlohmann::json& params) { return new BeatVq(params); }

const hlm_param_decl kBeatVqParams[] = {
    {"codes", "int[1,65535]", "500", "codebook size K (tokens = K + 4 special tokens)"},
    {"lead", "int[0,]", "0", "signal index whose beats are tokenized (when no lead_names match)"},
    {"lead_names", "list:string", "[]",
     "signal names (header descriptions) to tokenize before `lead`: the first a record has wins, "
     "`lead` where it has none (MIT-BIH: [MLII], which record 114 has second)"},
    {"sample_beats", "int[1,]", "200000",
     "k-means runs on at most this many beats, drawn at random"},
    {"iters", "int[1,]", "25", "at most this many Lloyd iterations"},
    {"seed", "int", "0", "seed of the k-means sample and k-means++ seeding"},
    {"window_before_s", "float(0,2]", "0.25", "window start before the R peak, seconds"},
    {"window_after_s", "float(0,2]", "0.40", "window end after the R peak, seconds"},
    {"points", "int[2,4096]", "64", "points per beat window (linear interpolation)"},
    {"baseline", "string", "\"highpass\"",
     "baseline removal: \"highpass\" (0.5 Hz) or \"median\" (200 ms + 600 ms medians)"},
    {"lowpass_hz", "float[0,]", "40.0", "low-pass cutoff before windowing; 0 disables it"},
    {"detect_all_leads", "bool", "false",
     "find beats on all leads together (R peaks on the tokenized lead)"},
    {"threads", "int[0,]", "0",
     "threads for the codebook fit (0 = all cores); tokens do not change"},
    {"codebook", "string", "\"\"", "a codebook file to use instead of fitting one"},
    {"shape", "string", "\"window\"",
     "what a code describes: \"window\" (the beat's samples) or \"relative\" (its RR features "
     "and its window against its record's template: the same meaning in every patient)"},
    {"template_descriptors", "bool", "false",
     "store with each beat 10 numbers describing its template (QRS width, P and T waves "
     "against the QRS) and the beat against it, for a head's `descriptors` input"},
    {"shape_descriptor_leads", "int[1,]", "1",
     "with shape_descriptors: how many of the record's signals carry them, the tokenized one "
     "first, then the others of its length in order (each against its own template)"},
    {"align_max_shift_s", "float[0,]", "0",
     "move each R peak by up to this many seconds to where its QRS matches its record's "
     "template best, before windows and RR intervals (0: off)"},
    {"template_beats", "string", "\"all\"",
     "which beats make a beat's template (its 50 neighbours either side): \"all\", or "
     "\"timely\", leaving out premature ones, so that bigeminy or a run of ectopic beats does "
     "not make the ectopic shape the template"},
    {"p_wave_descriptors", "bool", "false",
     "store with each beat, on each lead of the shape descriptors (the tokenized one alone "
     "without them), the correlation of its P wave (0.25 to 0.09 s before the R peak) with "
     "the median P wave of its record's late beats (the tenth with the longest RR interval "
     "before them), for a head's or the trees' `descriptors`"},
    {"shape_descriptors", "int[0,]", "0",
     "store with each beat its window and its window minus its template at this many points, "
     "over the template's QRS (0: none), for a head's or the trees' `descriptors`"},
};

}  // namespace

HLM_PLUGIN(hlm::Tokenizer, "beat-vq", "1.0.0",
           "heartbeat windows around detected R peaks, quantised by a k-means codebook",
           kBeatVqParams, make_beat_vq)
