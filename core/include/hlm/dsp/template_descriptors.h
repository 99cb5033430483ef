// What a record's typical beat looks like, in numbers a head can read beside the tokens.
// Relative tokens (beat-vq `shape: relative`) say how a beat differs from its record's template
// and so, by design, drop what every beat of a record shares: a wide QRS (bundle branch block),
// a missing P wave (atrial fibrillation, flutter), an inverted T wave. Those are what tells
// many "other rhythm" records of the Challenge 2017 from normal ones. The descriptors give them
// back, measured on the beat's local template (hlm/dsp/beat_morphology.h), plus three values of
// the beat itself against that template (its noise: second differences outside the QRS). Every
// duration is in seconds and every amplitude but one is a ratio to the QRS amplitude, so they mean
// the same at any sampling rate and gain.
#pragma once
#include <cstdint>
#include <vector>

#include "hlm/dsp/beat_window.h"

namespace hlm {

constexpr int kTemplateDescriptorCount = 10;
constexpr const char* kTemplateDescriptorNames[kTemplateDescriptorCount] = {
    "template QRS width (s)",
    "template log QRS peak-to-peak (lead units)",
    "template QRS main deflection / peak-to-peak",
    "template P wave height above the isoelectric level / QRS",
    "template P window range / QRS",
    "template T wave maximum / QRS",
    "template T wave minimum / QRS",
    "correlation of the beat with its template",
    "RMS of the beat minus its template in the P window / QRS",
    "RMS of the beat's second difference outside the QRS / QRS"};

// The part of the beat the descriptors read, seconds from the R peak. A QRS lies within
// +-120 ms of it; the isoelectric PR segment just before the QRS onset; the P wave between
// 250 and 90 ms before the R peak (a PR interval of 120-200 ms); the T wave from 150 ms on.
constexpr double kQrsSearchSeconds = 0.12;
constexpr double kIsoelectricSeconds[2] = {-0.10, -0.06};
constexpr double kPWaveSeconds[2] = {-0.25, -0.09};
constexpr double kTWaveSeconds[2] = {0.15, 0.40};
// The QRS is where the template changes faster than this fraction of its steepest slope.
constexpr double kQrsSlopeFraction = 0.15;

// A template's QRS: its isoelectric level (mean 100 to 60 ms before the R peak), its
// peak-to-peak within R +- kQrsHalfWidthSeconds against that level (at least 1e-3 lead units,
// so a flat template gives finite ratios), the sign that turns its main deflection upwards, and
// that deflection's size.
struct TemplateQrs {
  double isoelectric = 0, amplitude = 1e-3, sign = 1, main_deflection = 0;
};
// t: one template of window.points values; the window must cover the parts read
// (covers_template_descriptors).
TemplateQrs template_qrs(const float* t, const dsp::BeatWindowOptions& window);

// Whether windows cut with these options cover every part the descriptors read.
bool covers_template_descriptors(const dsp::BeatWindowOptions& window);

// kTemplateDescriptorCount values per beat, beat-major. windows: rows of window.points values
// (hlm/dsp/beat_window.h, in the lead's physical units), row_of_beat and templates as for
// relative_morphology (hlm/dsp/beat_morphology.h). A beat without a window gets its template's
// descriptors and the values of a beat equal to its template. InternalError when the window
// does not cover the parts read (covers_template_descriptors).
std::vector<float> template_descriptors(const float* windows, const dsp::BeatWindowOptions& window,
                                        const std::vector<int64_t>& row_of_beat,
                                        const std::vector<float>& templates);

}  // namespace hlm
