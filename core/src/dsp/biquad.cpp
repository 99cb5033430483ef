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

// One pass of the cascade over buf[0..m) in the given direction, in place. All sections run
// in one loop so that their recursions, each bound by its own latency, overlap.
void run_pass(const std::vector<Biquad>& sections, double* buf, size_t m, bool backward) {
  constexpr size_t kMax = 4;
  if (sections.size() > kMax) {  // rare: run the sections one after another
    for (const Biquad& s : sections) run_pass({s}, buf, m, backward);
    return;
  }
  const size_t k = sections.size();
  const ptrdiff_t step = backward ? -1 : 1;
  double* p = backward ? buf + m - 1 : buf;
  double z1[kMax], z2[kMax];
  double level = *p;  // each section starts settled on what the first sample becomes there
  for (size_t s = 0; s < k; ++s) {
    const State st = steady_state(sections[s], level);
    z1[s] = st.z1;
    z2[s] = st.z2;
    level *= sections[s].dc_gain();
  }
  for (size_t i = 0; i < m; ++i, p += step) {
    double v = *p;
    for (size_t s = 0; s < k; ++s) {
      const Biquad& q = sections[s];
      const double y = q.b0 * v + z1[s];
      z1[s] = q.b1 * v - q.a1 * y + z2[s];
      z2[s] = q.b2 * v - q.a2 * y;
      v = y;
    }
    *p = v;
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
