// ECG filters used before beat detection and windowing: baseline-wander removal (0.5 Hz
// high-pass or the 200 ms + 600 ms median pair) and a ~40 Hz low-pass. All are zero-phase, so
// a filtered beat stays where it was. Every function accepts out == x (in place).
#pragma once
#include <cstddef>
#include <vector>

namespace hlm::dsp {

// Second-order Butterworth high-pass run forward and backward (zero phase, the magnitude
// squared). Ends are padded by odd reflection so no step appears at the edges.
void highpass(const float* x, size_t n, double sampling_hz, double cutoff_hz, float* out);
// The same for a second-order Butterworth low-pass. A cutoff at or above 0.45 * sampling_hz
// copies x unchanged (the signal holds nothing above it worth removing).
void lowpass(const float* x, size_t n, double sampling_hz, double cutoff_hz, float* out);

// Running median over width_samples (made odd), edges padded by repeating the end values.
// A sorted window: each step is two binary searches (O(log w)) and a shift of the values
// between the old and the new sample's ranks - few on ECG, at most w.
void running_median(const float* x, size_t n, int width_samples, float* out);
// x minus its baseline, the baseline being a 600 ms median of a 200 ms median (de Chazal).
void remove_baseline_median(const float* x, size_t n, double sampling_hz, float* out);

enum class BaselineMethod { kHighPass, kMedianPair };

struct CleanOptions {
  BaselineMethod baseline = BaselineMethod::kHighPass;
  double highpass_hz = 0.5;
  double lowpass_hz = 40.0;  // 0 disables the low-pass
};

// Baseline removal then low-pass: the signal beat windows are cut from.
std::vector<float> clean_ecg(const float* x, size_t n, double sampling_hz,
                             const CleanOptions& options = {});

}  // namespace hlm::dsp
