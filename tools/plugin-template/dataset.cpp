// @NAME@: a dataset plugin for hlm. It serves sine-wave "ECG" records so the template builds
// and runs as is; replace read() with your own reader.
//
// A plugin is one shared library with one C entry point, made by HLM_PLUGIN at the bottom.
// The host checks the ABI version and build fingerprint in the descriptor before it calls
// anything else, then validates workflow params against kParams and calls the factory.
#include <cmath>

#include "hlm/dataset.h"  // the Dataset interface (records(), read(), fingerprint())
#include "hlm/errors.h"   // DataError for bad input: name the record and what to do

namespace {

class @CLASS@ : public hlm::Dataset {
 public:
  @CLASS@(int records, double seconds) : records_(records), seconds_(seconds) {}

  // Stable record names; tokenize runs them in parallel.
  std::vector<std::string> records() const override {
    std::vector<std::string> names;
    for (int i = 0; i < records_; ++i) names.push_back("@NAME@" + std::to_string(i));
    return names;
  }

  // One record: digital samples per signal plus the gain that turns them into mV, and the
  // reference annotations (MIT codes: 1 = normal beat) when you have them. Must be thread-safe.
  hlm::Record read(const std::string& name) const override {
    hlm::Record r;
    r.name = name;
    r.source = "@NAME@ plugin";
    r.sampling_hz = 250.0;
    r.frames = int64_t(seconds_ * r.sampling_hz);
    hlm::SignalInfo lead;
    lead.gain = 200.0;  // ADC units per mV
    lead.description = "synthetic lead";
    r.signals.push_back(lead);
    r.digital.assign(1, std::vector<int32_t>(size_t(r.frames)));
    for (int64_t i = 0; i < r.frames; ++i)
      r.digital[0][size_t(i)] = int32_t(200.0 * std::sin(2.0 * M_PI * 1.2 * double(i) / r.sampling_hz));
    return r;
  }

  // Changes whenever the data would: part of the tokenize stage's cache key.
  std::string fingerprint() const override {
    return "@NAME@:" + std::to_string(records_) + ":" + std::to_string(seconds_);
  }

 private:
  int records_;
  double seconds_;
};

// Parameters: name, type, default as JSON text (nullptr = required), help. Workflows are
// checked against these before any work starts, and `hlm plugins` lists them.
const hlm_param_decl kParams[] = {
    {"records", "int", "2", "number of records"},
    {"seconds", "float", "10.0", "length of each record"},
};

// The factory gets the validated params (defaults filled in). Throwing is fine here: the
// macro turns exceptions into an error message, nothing crosses the C boundary.
hlm::Dataset* make(const nlohmann::json& p) {
  if (p.at("records").get<int>() < 1) throw hlm::DataError("@NAME@: records must be at least 1");
  return new @CLASS@(p.at("records").get<int>(), p.at("seconds").get<double>());
}

}  // namespace

// The entry point: interface (its kind, "dataset", comes with it), name, version, description,
// params, factory.
HLM_PLUGIN(hlm::Dataset, "@NAME@", "0.1.0", "sine-wave records (template)", kParams, make)
