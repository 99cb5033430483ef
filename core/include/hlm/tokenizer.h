// Tokenizer plugins turn a record into heartbeat tokens. Tokenizing is split in three steps so
// that records run in parallel and a codebook can be fitted across records in between:
// extract (per record, thread-safe) -> fit (once, on a sample) -> assign (per record).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/ecg.h"
#include "hlm/plugin.h"

namespace hlm {

// Special tokens shared by every tokenizer; content tokens start at kFirstContentToken.
enum SpecialToken : uint32_t { kPad = 0, kBos = 1, kMask = 2, kUnk = 3 };
constexpr uint32_t kFirstContentToken = 4;

// The beats of one record. features holds feature_dim floats per beat (the resampled window
// for beat-vq; empty for tokenizers that need none); tokens is filled by assign().
struct Beats {
  std::string record;
  double sampling_hz = 0.0;
  std::vector<int64_t> positions;  // fiducial sample of each beat (R peak)
  std::vector<float> rr_seconds;   // interval to the previous beat (0 for the first)
  std::vector<uint8_t> labels;     // BeatClass of the matched reference beat, or kNone
  int feature_dim = 0;
  std::vector<float> features;
  std::vector<uint32_t> tokens;
  // Values a head may read beside the tokens (Tokenizer::descriptor_names() per beat,
  // beat-major), kept in the token store; empty when the tokenizer gives none.
  std::vector<float> descriptors;
  size_t size() const { return positions.size(); }
};

class Tokenizer {
 public:
  static constexpr const char* kPluginKind = "tokenizer";  // HLM_PLUGIN's descriptor kind
  virtual ~Tokenizer() = default;
  // Number of distinct tokens, special tokens included.
  virtual uint32_t vocab_size() const = 0;
  // Name plus a hash of everything that changes the tokens (parameters, fitted state).
  virtual std::string identity() const = 0;
  // Finds the beats of a record and their features. Thread-safe.
  virtual Beats extract(const Record& record) const = 0;
  // Whether fit() must run before assign() (a codebook that is not trained yet).
  virtual bool needs_fit() const { return false; }
  // Learns state (e.g. a codebook) from a sample of extracted beats.
  virtual void fit(const std::vector<const Beats*>& sample) { (void)sample; }
  // Saves / loads the fitted state (the codebook artifact). No-ops for stateless tokenizers.
  virtual void save_state(const std::string& path) const { (void)path; }
  virtual void load_state(const std::string& path) { (void)path; }
  // Fills beats.tokens. Thread-safe after fit().
  virtual void assign(Beats& beats) const = 0;
  // What extract() puts in Beats::descriptors, one name per value of a beat; empty for none.
  virtual std::vector<std::string> descriptor_names() const { return {}; }
};

}  // namespace hlm
