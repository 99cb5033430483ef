// A signal carried to another sampling rate with a band-limited (windowed sinc) converter,
// libsamplerate's (Debian's libsamplerate0-dev): what a recording of the same heart at the new
// rate would hold, anti-aliased when the rate falls. qrs-eval uses it to score a database at
// rates it was not recorded at (hlm qrs-eval --rate).
#pragma once
#include <vector>

namespace hlm::dsp {

// x (sampled at from_hz) at to_hz: about x.size() * to_hz / from_hz samples, sample k at time
// k / to_hz. ConfigError for rates that are not positive or further apart than 256 times (the
// converter's range).
std::vector<float> resample_to_rate(const std::vector<float>& x, double from_hz, double to_hz);

}  // namespace hlm::dsp
