// Where in each beat its R peak lies, made the same for every beat of a record. The detector
// marks a beat's largest deflection from the local baseline (hlm/dsp/qrs.h); in a QRS with an R
// and an S wave of about the same size (a precordial lead such as V5, or a noisy one) that
// mark moves between them from beat to beat, by 10-40 ms. Every comparison of a beat with its
// record's template then measures the move as well as the shape: in MIT-BIH 108 and 114 (marks
// spread over 5 and 4 samples at 360 Hz, against 0.4-1.7 in most records) hundreds of normal
// beats read as different from their template. Aligning each beat to its template, by the lag at
// which their QRS correlate best, is the usual remedy in template-matching beat classification, and
// the aligned mark also gives RR intervals without that jitter.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hlm::dsp {

// The R peaks moved to where each beat's QRS (R +- kQrsHalfWidthSeconds, hlm/dsp/beat_morphology.h)
// correlates best with its local template (the element-wise median of the QRS of the
// kTemplateBeats beats either side, at the detected peaks), over lags within +-max_shift_s.
// x: the filtered lead, n samples. A beat keeps its peak where a lag would reach outside x,
// or where its QRS or its template is flat; no beat moves to or past its neighbours, so the
// result is strictly increasing when r_peaks is.
// max_shift_s <= 0 returns r_peaks unchanged. With leave_out_premature, the templates leave the
// premature beats out (premature_beats and local_templates in hlm/dsp/beat_morphology.h).
std::vector<int64_t> align_r_peaks(const float* x, size_t n, double sampling_hz,
                                   const std::vector<int64_t>& r_peaks, double max_shift_s,
                                   bool leave_out_premature = false);

}  // namespace hlm::dsp
