// A beat's own shape as numbers a classifier can split on: its window, and its window minus its
// record's template (hlm/dsp/beat_morphology.h), resampled to a few points. The relative
// features and the template descriptors summarise a beat in a handful of values; an ectopic
// beat is often told by where exactly it differs (a P wave that is missing or early, a QRS
// that widens on one side only), which only the waveform keeps. Amplitudes are divided by the
// template's QRS peak-to-peak, and turned so that its main deflection points up, so a value
// means the same under any gain and lead axis; times are fixed seconds from the R peak, so any
// sampling rate gives the same columns.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/dsp/beat_window.h"

namespace hlm {

// Values per beat for `points` points: the beat, then the beat minus its template.
inline int beat_shape_descriptor_count(int points) { return 2 * points; }

// Their names, in order ("beat at -0.250 s / template QRS", ...).
std::vector<std::string> beat_shape_descriptor_names(const dsp::BeatWindowOptions& window,
                                                     int points);

// beat_shape_descriptor_count(points) values per beat, beat-major. windows, row_of_beat and
// templates as for template_descriptors (hlm/dsp/template_descriptors.h): a beat without a
// window gets its template's shape and a zero difference. InternalError when points < 2 or the
// window does not cover the template descriptors' parts (the QRS scale is read the same way).
std::vector<float> beat_shape_descriptors(const float* windows,
                                          const dsp::BeatWindowOptions& window,
                                          const std::vector<int64_t>& row_of_beat,
                                          const std::vector<float>& templates, int points);

}  // namespace hlm
