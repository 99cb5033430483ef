// Butterworth sections and the zero-phase cascade (see biquad.h).
#include "dsp/biquad.h"

#include <algorithm>
#include <cmath>

namespace hlm::dsp {

namespace {
constexpr double kPi = 3.14159265358979323846;

// Prewarped bilinear transform of a second-order Butterworth prototype.
Biquad butterworth(double sampling_hz, double cutoff_hz, bool high) {
  const double k = std::tan(kPi * cutoff_hz / sampling_hz);
  const double norm = 1.0 / (1.0 + std::sqrt(2.0) * k + k * k);
  Biquad s;
  s.b0 = high ? norm : k * k * norm;
  s.b1 = high ? -2.0 * s.b0 : 2.0 * s.b0;
  s.b2 = s.b0;
  s.a1 = 2.0 * (k * k - 1.0) * norm;
  s.a2 = (1.0 - std::sqrt(2.0) * k + k * k) * norm;
  return s;
}

struct State {
  double z1 = 0, z2 = 0;
};

// Steady state of one section for a constant input: what it would hold after forever.
State steady_state(const Biquad& s, double input) {
  const double y = input * s.dc_gain();
  State st;
  st.z2 = s.b2 * input - s.a2 * y;
  st.z1 = y - s.b0 * input;
  return st;
}

// One pass of the cascade over buf[0..m) in the given direction, in place.
void run_pass(const std::vector<Biquad>& sections, double* buf, size_t m, bool backward) {
  for (const Biquad& s : sections) {
    const ptrdiff_t step = backward ? -1 : 1;
    double* p = backward ? buf + m - 1 : buf;
    State st = steady_state(s, *p);
    double z1 = st.z1, z2 = st.z2;
    const double b0 = s.b0, b1 = s.b1, b2 = s.b2, a1 = s.a1, a2 = s.a2;
    for (size_t i = 0; i < m; ++i, p += step) {
      const double in = *p;
      const double y = b0 * in + z1;
      z1 = b1 * in - a1 * y + z2;
      z2 = b2 * in - a2 * y;
      *p = y;
    }
  }
}
}  // namespace

Biquad butterworth_lowpass(double sampling_hz, double cutoff_hz) {
  return butterworth(sampling_hz, cutoff_hz, false);
}
Biquad butterworth_highpass(double sampling_hz, double cutoff_hz) {
  return butterworth(sampling_hz, cutoff_hz, true);
}

void filtfilt(const std::vector<Biquad>& sections, const float* x, size_t n, size_t pad_samples,
              float* out) {
  if (n == 0) return;
  const size_t pad = std::min(pad_samples, n - 1);
  std::vector<double> buf(n + 2 * pad);
  // Odd reflection about the end values keeps the level and the slope continuous.
  const double first = x[0], last = x[n - 1];
  for (size_t i = 0; i < pad; ++i) buf[pad - 1 - i] = 2.0 * first - x[i + 1];
  for (size_t i = 0; i < n; ++i) buf[pad + i] = x[i];
  for (size_t i = 0; i < pad; ++i) buf[pad + n + i] = 2.0 * last - x[n - 2 - i];
  run_pass(sections, buf.data(), buf.size(), false);
  run_pass(sections, buf.data(), buf.size(), true);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(buf[pad + i]);
}

}  // namespace hlm::dsp
