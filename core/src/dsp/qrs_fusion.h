// Combining leads for the QRS detector: each lead's envelope scaled to its local QRS level and
// weighted by how clearly it shows beats, then the candidate peaks of the sum.
#pragma once
#include <cstdint>
#include <vector>

#include "dsp/qrs_envelope.h"

namespace hlm::dsp::qrs {

// Levels and weights are kept per block of 2 s, which nearly always holds a QRS.
constexpr int kBlock = 400;

struct Candidate {
  int64_t i = 0;        // internal sample
  float height = 0.0f;  // fused envelope
  float slope = 0.0f;   // steepest fused slope within 60 ms
  // The slow band's envelope near the peak (see add_slow_heights): wide complexes that the
  // main band shrinks keep their height there.
  float slow = 0.0f;
};

// A lead's QRS level per block: the median of the maxima of 31 blocks around it (about a
// minute; two for a slow envelope, whose blocks last twice as long).
std::vector<float> qrs_level(const LeadEnvelope& lead);

// Lead weights per block: a squared quality over about 10 s, so the best lead dominates.
// Before any beat is known, how far the lead's block maxima stand above its background (a flat
// lead scores near 0, a noisy one near 1). Once beats are known, the lead's median height at
// the beats over the 90th percentile of its highest point between beats, so artefacts that
// look like beats also lower it.
std::vector<float> peak_weight(const LeadEnvelope& lead, const std::vector<float>& level);
std::vector<float> beat_weight(const LeadEnvelope& lead, const std::vector<float>& level,
                               const std::vector<Candidate>& beats);

// The leads' envelopes (and slopes), each divided by its QRS level and weighted by its share of
// the weights, summed into `out` (its storage reused); the coefficients are interpolated
// between block centres.
struct Fused {
  std::vector<float> slope;
  std::vector<float> energy;
};
void fuse(const std::vector<LeadEnvelope>& leads, const std::vector<std::vector<float>>& level,
          const std::vector<std::vector<float>>& weight, Fused& out);
// fuse for a record of one lead, to the bit, without a second pair of record-long buffers: the
// lead's envelope and slope are scaled where they are and handed to `out` (their storage
// swapped), so `lead` holds out's old storage afterwards.
void fuse_in_place(LeadEnvelope& lead, const std::vector<float>& level, Fused& out);

// Local maxima of the fused envelope (see local_maxima) with their height and nearby slope.
std::vector<Candidate> find_candidates(const Fused& fused, int64_t separation);

// Sets each candidate's `slow`: the highest point within 60 ms of it of each lead's slow-band
// envelope (see kSlowStretch), over that lead's QRS level in the slow band, averaged with the
// leads' weights (per block of the main band).
void add_slow_heights(const std::vector<LeadEnvelope>& slow,
                      const std::vector<std::vector<float>>& slow_level,
                      const std::vector<std::vector<float>>& weight,
                      std::vector<Candidate>& candidates);

// The median (the upper one of an even count) and the value at share q (0 to 1) of v[0 ..
// count), reordering v; count > 0.
float median_in_place(float* v, size_t count);
float percentile_in_place(float* v, size_t count, float q);

// The slow band fused like add_slow_heights weighs it, at every sample of the main band: sample
// i holds the leads' slow envelopes at time i / kRateHz, each over its QRS level.
void fuse_slow(const std::vector<LeadEnvelope>& slow,
               const std::vector<std::vector<float>>& slow_level,
               const std::vector<std::vector<float>>& weight, size_t m, std::vector<float>& out);

}  // namespace hlm::dsp::qrs
