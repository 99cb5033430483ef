// Rhythm features of each beat from its RR intervals, the strongest inter-patient cue for
// supraventricular and ventricular ectopy (de Chazal 2004; Llamedo & Martinez 2011): a
// premature beat comes early against the local rhythm and is followed by a longer interval.
// Ratios to an average (the local one, or the record's median), not raw intervals, so a fast
// and a slow heart look alike.
#pragma once
#include <cstddef>
#include <vector>

namespace hlm {

// Features per beat, in this order.
constexpr int kRrFeatureCount = 3;
constexpr const char* kRrFeatureNames[kRrFeatureCount] = {
    "log(RR before / local RR)", "log(RR after / local RR)", "log(local RR / 1 s)"};
// The local RR: mean of the intervals of the beats within this many beats either side.
constexpr int kLocalRrBeats = 10;

// rr_seconds[i] is the interval from beat i-1 to beat i (0 for the first beat), as the token
// store keeps it. Returns rr_seconds.size() * kRrFeatureCount values, beat-major. Intervals are
// clamped to 0.15-3 s first and each log to +-2, so a missed beat or a pause cannot blow up
// the input of a classifier.
std::vector<float> rr_features(const float* rr_seconds, size_t beats);

// A beat's rhythm against its whole record, which the local features above cannot see. In
// atrial fibrillation every interval is irregular, so an early beat is no sign of an ectopic
// one; in a run of supraventricular tachycardia the local average is the run's own, so its
// beats look typical locally but short against the record. Features per beat, in this order.
constexpr int kRecordRhythmFeatureCount = 3;
constexpr const char* kRecordRhythmFeatureNames[kRecordRhythmFeatureCount] = {
    "log(RR before / record median RR)", "log(RR after / record median RR)",
    "local irregularity (median |log(RR / RR before)| within kLocalRrBeats either side)"};

// Same input, clamping and layout as rr_features, kRecordRhythmFeatureCount values per beat.
std::vector<float> record_rhythm_features(const float* rr_seconds, size_t beats);

// The rhythm around a beat with the beat's own intervals left out: whether it sits in an
// irregular stretch. In atrial fibrillation most normal beats come early or late against
// their neighbours, so an early beat there is no sign of an ectopic one. Beside the local
// irregularity above (a median over kLocalRrBeats either side, the beat's own changes
// included), these look three times as far, leave the beat's own changes out and add the share
// of large changes and a low quantile. Measured over the changes |log(RR / RR before)| of the
// kRhythmContextBeats beats either side, those within kRhythmContextOwn of the beat left out.
// Features per beat, in this order.
constexpr int kRhythmContextFeatureCount = 3;
constexpr int kRhythmContextBeats = 30;
constexpr int kRhythmContextOwn = 2;
constexpr const char* kRhythmContextFeatureNames[kRhythmContextFeatureCount] = {
    "rhythm context: median |log(RR / RR before)|",
    "rhythm context: share of |log(RR / RR before)| above 0.1",
    "rhythm context: 25th percentile of |log(RR / RR before)|"};

// Same input, clamping and layout as rr_features, kRhythmContextFeatureCount values per beat;
// 0 where a record is too short to leave any change around the beat.
std::vector<float> rhythm_context_features(const float* rr_seconds, size_t beats);

}  // namespace hlm
