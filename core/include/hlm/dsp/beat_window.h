// Beat windows: the samples around each R peak, resampled to a fixed number of points so that
// records of any sampling rate give the same shape (spec/tokenizers.md, beat-vq step 4).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hlm::dsp {

struct BeatWindowOptions {
  double before_seconds = 0.25;
  double after_seconds = 0.40;
  int points = 64;
};

// For each R peak (sample index into x), takes `points` values evenly spaced from
// r - before*fs to r + after*fs (both ends included, linear interpolation), subtracts their
// mean and appends them to *features. Beats whose window does not lie inside [0, n-1] are
// dropped. Returns the indices into r_peaks of the beats kept, in order.
std::vector<size_t> cut_beat_windows(const float* x, size_t n, double sampling_hz,
                                     const std::vector<int64_t>& r_peaks,
                                     const BeatWindowOptions& options,
                                     std::vector<float>* features);

}  // namespace hlm::dsp
