// Second-order IIR sections (Butterworth by the bilinear transform) and zero-phase cascades:
// the building blocks of the ECG filters (filter.cpp).
#pragma once
#include <cstddef>
#include <vector>

namespace hlm::dsp {

// Transposed direct form II: y = b0 x + z1; z1 = b1 x - a1 y + z2; z2 = b2 x - a2 y.
struct Biquad {
  double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
  double dc_gain() const { return (b0 + b1 + b2) / (1.0 + a1 + a2); }
};

Biquad butterworth_lowpass(double sampling_hz, double cutoff_hz);
Biquad butterworth_highpass(double sampling_hz, double cutoff_hz);

// Runs the cascade forward over x then backward (zero phase). The ends are extended by
// pad_samples of odd reflection and each section starts in its steady state for the first
// value, so a DC offset or a slope at the edges leaves no transient. out may equal x. At
// most four sections.
// Long signals run as several segments at once (allow_lanes), which agree with the one
// recursion to about 1e-12 of the signal before the output is rounded to float (the last bit
// of some values); tests compare the two.
void filtfilt(const std::vector<Biquad>& sections, const float* x, size_t n, size_t pad_samples,
              float* out, bool allow_lanes = true);

}  // namespace hlm::dsp
