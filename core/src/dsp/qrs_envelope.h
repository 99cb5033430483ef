// The QRS detector's front end: each lead resampled to a fixed internal rate, band-passed by
// moving sums (linear phase, no delay), differentiated, squared and integrated over ~100 ms;
// then each lead's envelope is normalised by its local QRS level and the leads are fused.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hlm::dsp::qrs {

// Every lead is processed at this rate whatever the recording's, so one set of constants fits
// all records.
constexpr double kRateHz = 200.0;
// Statistics are kept per block of 2 s, which nearly always holds a QRS.
constexpr int kBlock = 400;

// Median by value (upper median for an even count); 0 for an empty vector.
float median(std::vector<float> v);

// x (n samples at sampling_hz) resampled to kRateHz by a boxcar anti-alias filter and linear
// interpolation. Sample j of the result lies at time j / kRateHz.
std::vector<float> resample(const float* x, size_t n, double sampling_hz);

// Band-passed signal (about 5-30 Hz) and its energy envelope, both at kRateHz and centred on
// the input (no delay).
struct Envelope {
  std::vector<float> band;
  std::vector<float> slope;   // |derivative of band|
  std::vector<float> energy;  // moving mean of the squared derivative
};
Envelope envelope(const std::vector<float>& x);

// Divides the envelope (energy, and slope by its square root) by the lead's local QRS level:
// the median of the 2 s block maxima within half_blocks blocks either side.
void normalise(Envelope& e, int half_blocks);

// Local maxima of `height` that are the largest within separation samples either side.
struct Candidate {
  int64_t i = 0;        // internal sample
  float height = 0.0f;  // fused energy
  float slope = 0.0f;   // fused steepest slope within 60 ms
};
std::vector<Candidate> find_candidates(const std::vector<float>& height,
                                       const std::vector<float>& slope, int64_t separation);

}  // namespace hlm::dsp::qrs
