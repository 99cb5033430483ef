// The QRS detector's front end: a lead resampled to a fixed internal rate, band-passed by
// moving sums (linear phase, no delay), differentiated, rectified and integrated over 125 ms.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hlm::dsp::qrs {

// Every lead is processed at this rate whatever the recording's, so one set of constants fits
// all records.
constexpr double kRateHz = 200.0;

// Work buffers are kept per thread from record to record (fresh pages cost more than the
// arithmetic), unless they grew past this: a worker should not hold hundreds of megabytes
// after a day-long record.
constexpr size_t kKeepFloats = size_t(1) << 24;
template <class Vector>
void release_if_large(Vector& v) {
  if (v.capacity() > kKeepFloats) Vector().swap(v);
}

// The slow band: the same front end on the lead resampled to kRateHz / kSlowStretch, so its
// windows last twice as long (50 ms minus 250 ms means, about 2-15 Hz; 250 ms envelope). A wide
// ventricular complex, which the main band shrinks to the height of a T wave, stands about as
// tall as a narrow QRS there. Sample j of a slow envelope lies at time j * kSlowStretch / kRateHz.
constexpr int kSlowStretch = 2;

// One lead at kRateHz: its ~5-30 Hz band, the |slope| of that and the 125 ms moving mean of the
// slope (the envelope), all centred on the input (no delay). Sample j lies at time j / kRateHz (for
// a slow envelope, j * kSlowStretch / kRateHz).
struct LeadEnvelope {
  std::vector<float> slope;
  std::vector<float> energy;
  // The band itself, signed (the waves, not their energy), kept for the slow band only: the
  // pause search compares a pause's waves with those that follow the regular beats
  // (qrs_pause_waves.h).
  std::vector<float> band;
};
// Fills `out`, and `slow` with the slow band when given, reusing their storage (the detector
// keeps them per thread: on a 30-minute record, fresh pages cost more than the arithmetic).
// Scratch buffers are per thread too.
void lead_envelope(const float* x, size_t n, double sampling_hz, LeadEnvelope& out,
                   LeadEnvelope* slow = nullptr);

// Indices of the local maxima of h that are the largest within `separation` samples either
// side (the first of equal values wins). h holds no NaN (an envelope never does).
std::vector<int64_t> local_maxima(const std::vector<float>& h, int64_t separation);

}  // namespace hlm::dsp::qrs
