// How each beat's shape differs from its own record's typical beat. Inter-patient beat
// classification (train on some patients, test on others) fails when a classifier learns
// shapes: every patient's normal beat has its own amplitude and form (lead placement, axis,
// conduction), so a shape seen only as a V beat in training may be a new patient's N beat.
// What carries across patients is the comparison with the same patient's usual beat: an
// ectopic beat differs from it, a normal one does not (de Chazal 2004 and Llamedo & Martinez
// 2011 likewise normalise features per patient). A beat's shape is its window (beat-vq's
// `shape: relative` tokens) or the centroid of its beat-vq token (a head's morphology_features).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hlm {

// Features per beat, in this order. "Template": the element-wise median of the shapes of the
// beats within kTemplateBeats either side (ectopic beats, while fewer than half of them, do not
// move it). Distances are relative to the template's size and taken as log(d + 0.01).
constexpr int kMorphologyFeatureCount = 5;
constexpr const char* kMorphologyFeatureNames[kMorphologyFeatureCount] = {
    "log distance to the record's template", "correlation with the template",
    "log(peak-to-peak / the template's)", "log distance within the QRS (R +- 80 ms)",
    "log distance outside the QRS"};
constexpr int kTemplateBeats = 50;
// Half the width of the QRS part of a beat window: a normal QRS lasts up to about 100 ms and a
// ventricular one longer, so +-80 ms around the R peak holds the QRS of either.
constexpr double kQrsHalfWidthSeconds = 0.08;

// Where the R peak and the QRS lie in a codebook's beat windows.
struct BeatShapeLayout {
  int points = 0;                  // values per shape
  int qrs_first = 0, qrs_end = 0;  // the QRS part: [qrs_first, qrs_end)
};

// The layout of windows of `points` values from before_s ahead of the R peak to after_s past it.
BeatShapeLayout beat_shape_layout(int points, double before_s, double after_s);

// The layout of a beat-vq codebook of beat windows from its metadata ("beat-vq {params}":
// points, window_before_s, window_after_s). ConfigError naming `path` when its rows are not
// beat windows (another tokenizer, or beat-vq's relative shapes).
BeatShapeLayout codebook_shape_layout(const std::string& metadata, int dim,
                                      const std::string& path);

// Which beats to leave out of templates (see local_templates): the premature ones, whose RR
// interval before them is shorter than kPrematureRatio of a reference interval. Where ectopic
// beats are half or more of a beat's neighbours (bigeminy, a run of ventricular tachycardia),
// the median of all of them is the ectopic shape, and the ectopic beats then match the template
// they are compared with. The reference is the larger of the record's median interval and the
// 75th percentile of the intervals of the kTemplateBeats beats either side: in bigeminy that is
// the pause after each ectopic beat, not its short coupling interval, and in a run of
// tachycardia longer than the neighbourhood it is still the record's usual rhythm. (Sinus
// beats next to a long stretch of bigeminy may be marked too, as its pauses raise the
// reference there; they are then left out, and the other sinus beats make the template.)
// rr[i] is beat i's interval from the beat before it, in any unit; 0 (the first beat) for
// none: such a beat is not premature.
constexpr double kPrematureRatio = 0.85;
std::vector<bool> premature_beats(const std::vector<double>& rr);

// The template of each of one record's beats (points values per beat, beat-major). shapes
// holds rows of `points` values; row_of_beat[i] is beat i's row, or -1 where the beat has no
// shape (an unknown token, a window over invalid samples): it is left out of every template,
// and its own is that of its neighbours (all zero when none of them has a shape either).
// With `left_out` (premature_beats), the beats it marks are left out too, except where fewer
// than kMinTemplateShapes of the neighbours would remain (a stretch of faster sinus rhythm,
// where every beat is early against the record's median): there all beats with a shape count.
constexpr int kMinTemplateShapes = 10;
std::vector<float> local_templates(const float* shapes, int points,
                                   const std::vector<int64_t>& row_of_beat,
                                   const std::vector<bool>& left_out = {});

// Features of one record's beats, beat-major, against `templates` (local_templates of the same
// shapes). A beat without a shape has those of a typical beat (the logs at log(0.01),
// correlation 1, amplitude 0).
std::vector<float> relative_morphology(const float* shapes, const BeatShapeLayout& layout,
                                       const std::vector<int64_t>& row_of_beat,
                                       const std::vector<float>& templates);
// The same, computing the templates.
std::vector<float> relative_morphology(const float* shapes, const BeatShapeLayout& layout,
                                       const std::vector<int64_t>& row_of_beat);

}  // namespace hlm
