// Seeded random numbers for the synthetic ECG, identical on every standard library (the
// std:: distributions are implementation-defined; std::mt19937_64 itself is not).
#pragma once
#include <cmath>
#include <cstdint>
#include <random>

namespace hlm::dsp {

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1) from 53 bits.
  double unit() { return double(engine_() >> 11) * (1.0 / 9007199254740992.0); }
  // Standard normal by Box-Muller (the cosine branch only: simple and stateless).
  double normal() {
    const double u = 1.0 - unit(), v = unit();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace hlm::dsp
