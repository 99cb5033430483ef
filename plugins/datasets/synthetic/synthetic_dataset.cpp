// The `synthetic` dataset plugin: records generated on demand by hlm::dsp::synthesize_ecg, with
// ground-truth beat (N, V) and rhythm ((N, (AFIB) annotations. Needs no data on disk.
#include <cstdio>
#include <string>
#include <vector>

#include "hlm/dataset.h"
#include "hlm/dsp/synthetic_ecg.h"
#include "hlm/errors.h"
#include "hlm/plugin.h"
#include "hlm/util.h"

namespace {

// Bumped whenever the generator's output changes, so cached tokens are rebuilt.
constexpr const char* kGeneratorVersion = "synthetic-ecg/1";

class SyntheticDataset final : public hlm::Dataset {
 public:
  explicit SyntheticDataset(const nlohmann::json& p) {
    const int count = p.value("records", 4);
    base_.seconds = p.value("seconds", 300.0);
    base_.sampling_hz = p.value("sampling_hz", 360.0);
    seed_ = p.value("seed", uint64_t{0});
    base_.pvc_rate = p.value("pvc_rate", 0.05);
    base_.af_fraction = p.value("af_fraction", 0.25);
    base_.noise_mv = p.value("noise_mv", 0.01);
    if (count < 1 || count > 100000)
      throw hlm::ConfigError("synthetic: records={} must be in [1, 100000]", count);
    for (int i = 0; i < count; ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), "syn%03d", i);
      names_.push_back(name);
    }
    // Fail at creation, not in the middle of a stage, when an option is out of range.
    hlm::dsp::SyntheticEcgOptions probe = options_for(0);
    probe.seconds = std::min(probe.seconds, 1.0);
    hlm::dsp::synthesize_ecg("probe", probe);
  }

  std::vector<std::string> records() const override { return names_; }

  hlm::Record read(const std::string& record) const override {
    for (size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == record) return hlm::dsp::synthesize_ecg(record, options_for(i));
    throw hlm::DataError("synthetic dataset: no record '{}' (it has syn000..syn{}){}", record,
                         names_.back().substr(3), hlm::did_you_mean(record, names_));
  }

  std::string fingerprint() const override {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "%s records=%zu seconds=%.17g sampling_hz=%.17g seed=%llu pvc_rate=%.17g "
                  "af_fraction=%.17g noise_mv=%.17g",
                  kGeneratorVersion, names_.size(), base_.seconds, base_.sampling_hz,
                  static_cast<unsigned long long>(seed_), base_.pvc_rate, base_.af_fraction,
                  base_.noise_mv);
    return text;
  }

 private:
  // Each record gets its own seed and a resting heart rate between 55 and 95 bpm, so the
  // records differ in rate and morphology scale as real subjects do.
  hlm::dsp::SyntheticEcgOptions options_for(size_t index) const {
    hlm::dsp::SyntheticEcgOptions o = base_;
    const uint64_t mix[2] = {seed_, static_cast<uint64_t>(index)};
    o.seed = hlm::fnv1a64(mix, sizeof(mix));
    o.heart_rate_bpm = 55.0 + double(o.seed % 4001) / 100.0;
    return o;
  }

  hlm::dsp::SyntheticEcgOptions base_;
  uint64_t seed_ = 0;
  std::vector<std::string> names_;
};

hlm::Dataset* make_synthetic(const nlohmann::json& params) { return new SyntheticDataset(params); }

const hlm_param_decl kSyntheticParams[] = {
    {"records", "int[1,]", "4", "number of records, named syn000, syn001, ..."},
    {"seconds", "float(0,]", "300", "length of each record"},
    {"sampling_hz", "float[50,10000]", "360", "sampling rate"},
    {"seed", "int", "0", "seed; each record derives its own from it and its index"},
    {"pvc_rate", "float[0,1]", "0.05",
     "probability that a beat is a premature ventricular beat (V)"},
    {"af_fraction", "float[0,1]", "0.25", "share of each record's time in atrial fibrillation"},
    {"noise_mv", "float[0,]", "0.01", "white noise standard deviation, mV"},
};

}  // namespace

HLM_PLUGIN(
    hlm::Dataset, "synthetic", "1.0.0",
    "seeded ECGSYN-style ECG with PVCs and atrial fibrillation, with ground-truth annotations",
    kSyntheticParams, make_synthetic)
