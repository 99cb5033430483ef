// In-memory ECG: a record's signals (digital samples plus the header fields that turn them
// into physical units) and its annotations. Shared by datasets, tokenizers and stages.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace hlm {

// Marks a sample WFDB calls invalid (e.g. -2048 in format 212, -32768 in format 16).
constexpr int32_t kInvalidSample = std::numeric_limits<int32_t>::min();

// out[i] = (digital[i] - baseline) / gain as a float, 0 where digital[i] is kInvalidSample: a
// signal in physical units. One loop over vectors of samples (physical_units.cpp).
void to_physical(const int32_t* digital, size_t n, int baseline, double gain, float* out);

// Whether any of digital[0, n) is kInvalidSample (a scan without an early exit, which
// vectorises: most signals have none).
bool any_invalid(const int32_t* digital, size_t n);

struct SignalInfo {
  std::string file_name;  // e.g. "208.dat"
  int format = 0;         // 212, 16, 61, 80, 160, ...
  int samples_per_frame = 1;
  int skew = 0;
  long byte_offset = 0;
  double gain = 200.0;      // ADC units per physical unit (WFDB default 200)
  bool gain_given = false;  // false when the header omitted it (WFDB then uses 200)
  int baseline = 0;
  std::string units = "mV";
  int adc_resolution = 12;
  int adc_zero = 0;
  int initial_value = 0;
  int checksum = 0;
  int block_size = 0;
  std::string description;
};

struct Annotation {
  int64_t sample = 0;  // absolute sample number
  uint8_t code = 0;    // MIT annotation code (1 = N, 5 = V, 28 = rhythm change, ...)
  int8_t subtype = 0;
  uint8_t channel = 0;
  uint8_t num = 0;
  std::string aux;  // e.g. "(AFIB" for a rhythm change
};

struct Record {
  std::string name;    // record name, e.g. "208"
  std::string source;  // where it came from (path or generator), for errors
  double sampling_hz = 250.0;
  double counter_hz = 0.0;
  int64_t frames = 0;                         // samples per signal
  std::vector<SignalInfo> signals;            // empty for annotation-only records
  std::vector<std::vector<int32_t>> digital;  // digital[signal][frame], kInvalidSample if invalid
  std::vector<Annotation> annotations;        // reference annotations, sorted by sample
  std::vector<std::string> comments;          // header comment lines, without '#'
  // The record's reference class where a dataset gives one per record (Challenge 2017's
  // N, A, O or ~ from its REFERENCE csv), else empty.
  std::string label;

  // Why the record has no samples although its header lists signals ("" when it has samples
  // or lists none): the signal file is missing or not a regular file, and the reader took the
  // record for one of annotations alone.
  std::string missing_samples() const {
    if (!digital.empty() || signals.empty()) return "";
    return "its header lists " + std::to_string(signals.size()) + " signal(s) in " +
           signals.front().file_name +
           ", but that file is missing beside the header or is not a regular file (a pipe, a "
           "device), so only its annotations were read; fetch the record's signal files, or "
           "leave the record out";
  }

  // Signal `lead` in physical units (e.g. mV); invalid samples become 0.
  std::vector<float> physical(int lead) const {
    std::vector<float> out(digital.at(lead).size());
    const SignalInfo& s = signals.at(lead);
    to_physical(digital[lead].data(), out.size(), s.baseline, s.gain == 0.0 ? 200.0 : s.gain,
                out.data());
    return out;
  }

  // The signals other than `first` that have its length (simultaneous leads), in order.
  std::vector<int> other_leads(int first) const {
    std::vector<int> out;
    for (int k = 0; k < static_cast<int>(digital.size()); ++k)
      if (k != first && digital[k].size() == digital.at(first).size()) out.push_back(k);
    return out;
  }

  // Signal `first` and every other signal of the same length, in physical units, `first` at
  // index 0: what a multi-lead QRS detector takes.
  std::vector<std::vector<float>> physical_leads(int first = 0) const {
    std::vector<std::vector<float>> leads;  // not {physical(first)}: that would copy it
    leads.push_back(physical(first));
    for (int k : other_leads(first)) leads.push_back(physical(k));
    return leads;
  }
};

// Pointers to the data of each lead, for APIs that take several leads.
inline std::vector<const float*> lead_pointers(const std::vector<std::vector<float>>& leads) {
  std::vector<const float*> out;
  for (const auto& lead : leads) out.push_back(lead.data());
  return out;
}

// AAMI beat classes (EC57): the labels fine-tuning predicts.
enum class BeatClass : uint8_t { kN = 0, kS = 1, kV = 2, kF = 3, kQ = 4, kNone = 255 };
constexpr int kBeatClassCount = 5;
inline const char* beat_class_name(BeatClass c) {
  switch (c) {
    case BeatClass::kN:
      return "N";
    case BeatClass::kS:
      return "S";
    case BeatClass::kV:
      return "V";
    case BeatClass::kF:
      return "F";
    case BeatClass::kQ:
      return "Q";
    default:
      return "-";
  }
}

// The MIT code of a rhythm change (RHYTHM, "+"): its aux names the new rhythm, e.g. "(AFIB".
constexpr uint8_t kRhythmChangeCode = 28;

// True for the MIT codes WFDB's isqrs() counts as beats (N L R a V F J A S E j / Q B ? ! e n f r).
inline bool is_beat_code(uint8_t code) {
  switch (code) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
    case 13:
    case 25:
    case 30:
    case 31:
    case 34:
    case 35:
    case 38:
    case 41:
      return true;
    default:
      return false;
  }
}

// AAMI class of an MIT beat code (EC57, as de Chazal 2004 groups them): N = N L R e j;
// S = A a J S; V = V E; F = F; Q = / f Q. kNone for every other code: non-beat annotations,
// and the beat codes no AAMI class names (ventricular flutter waves '!', B, n, r, ?), which the
// published inter-patient counts leave out (DS1: 472 flutter waves of record 207).
inline BeatClass aami_class(uint8_t code) {
  switch (code) {
    case 1:
    case 2:
    case 3:
    case 34:
    case 11:
      return BeatClass::kN;  // N L R e j
    case 8:
    case 4:
    case 7:
    case 9:
      return BeatClass::kS;  // A a J S
    case 5:
    case 10:
      return BeatClass::kV;  // V E
    case 6:
      return BeatClass::kF;  // F
    case 12:
    case 38:
    case 13:
      return BeatClass::kQ;  // / f Q
    default:
      return BeatClass::kNone;
  }
}

}  // namespace hlm
