// Sampling-rate conversion (see hlm/dsp/resample.h).
#include "hlm/dsp/resample.h"

#include <samplerate.h>

#include <cmath>

#include "hlm/errors.h"

namespace hlm::dsp {

std::vector<float> resample_to_rate(const std::vector<float>& x, double from_hz, double to_hz) {
  if (!(from_hz > 0.0) || !(to_hz > 0.0))
    throw ConfigError("resampling from {} Hz to {} Hz: both rates must be positive", from_hz,
                      to_hz);
  const double ratio = to_hz / from_hz;
  if (!src_is_valid_ratio(ratio))
    throw ConfigError(
        "resampling from {} Hz to {} Hz: the rates are more than 256 times apart; choose a rate "
        "from {} to {} Hz",
        from_hz, to_hz, from_hz / 256.0, from_hz * 256.0);
  if (ratio == 1.0 || x.empty()) return x;
  std::vector<float> y(size_t(std::ceil(double(x.size()) * ratio)) + 1);
  SRC_DATA data{};
  data.data_in = x.data();
  data.input_frames = long(x.size());
  data.data_out = y.data();
  data.output_frames = long(y.size());
  data.src_ratio = ratio;
  data.end_of_input = 1;
  // Medium quality: a pass band to 90 % of the lower rate's Nyquist frequency at 97 dB
  // signal-to-noise ratio (libsamplerate's figures), far more than the QRS band (5-30 Hz)
  // needs; the best converter widens the band to 97 % at more cost.
  if (const int error = src_simple(&data, SRC_SINC_MEDIUM_QUALITY, 1))
    throw DataError("resampling from {} Hz to {} Hz failed: {}", from_hz, to_hz,
                    src_strerror(error));
  if (data.input_frames_used != data.input_frames)
    throw DataError("resampling from {} Hz to {} Hz read {} of {} samples", from_hz, to_hz,
                    data.input_frames_used, data.input_frames);
  y.resize(size_t(data.output_frames_gen));
  return y;
}

}  // namespace hlm::dsp
