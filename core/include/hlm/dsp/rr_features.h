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

// Where a beat's own intervals fall among those of the rhythm around it: log RR minus the
// median log RR (nearest rank, as the quartiles) of the kRhythmContextBeats beats either side
// (those within kRhythmContextOwn of the beat left out), over their interquartile range (at least
// kRrWithinContextFloor, so a very regular rhythm does not divide by nearly 0), clamped to +-10. A
// premature atrial beat in sinus rhythm lies far below the spread of its neighbours' intervals; an
// early normal beat in atrial fibrillation lies within it, where its RR against the local average
// (rr_features) reads the same for both. On DS1's reference beats, RR before at z < -2: 48 % of S
// beats, 0.2 % of record 203's N beats (atrial fibrillation), where RR before under 0.85 of the
// mean of the 21 intervals around it takes 58 % and 27 %. Features per beat, in this order.
constexpr int kRrWithinContextCount = 2;
constexpr double kRrWithinContextFloor = 0.02;
constexpr const char* kRrWithinContextNames[kRrWithinContextCount] = {
    "RR before within the rhythm around it (robust z)",
    "RR after within the rhythm around it (robust z)"};

// Same input and layout as rr_features, kRrWithinContextCount values per beat; 0 for an
// interval the record does not have (before its first beat, after its last) and where fewer
// than 8 intervals are left around the beat.
std::vector<float> rr_within_context(const float* rr_seconds, size_t beats);

// Whether the rhythm repeats: each interval's smallest change, |log(RR / RR k before)|, against
// the kRrPatternLags intervals before it. Ectopy makes a regular pattern: in bigeminy every
// interval matches the one two before it, in trigeminy the one three before, and an isolated
// premature beat disturbs two intervals, so a segment's median stays as low as in sinus rhythm.
// In atrial fibrillation no interval predicts the next ones. The change between successive
// intervals alone is as large in bigeminy as in atrial fibrillation. Lags up to 3 cover
// bigeminy and trigeminy. (An ectopy-aware reading of the same intervals as the RR-interval AF
// detectors that set ectopic beats aside, such as Lian et al. 2011's RdR map.)
constexpr int kRrPatternLags = 3;
// Every value is at least this: one sample of a 128 Hz record (7.8 ms) in an interval of 0.8 s.
// Beat times from annotations at 128 Hz (ltafdb) repeat an interval exactly at half of their
// beats, detected beats at 360 Hz almost never; below this change no supported sampling rate
// tells one from the other, so the values read the same at any rate.
constexpr double kRrPatternResolution = 0.01;

// Same input and clamping as rr_features, one value per beat, from kRrPatternResolution to 2;
// 0 for the record's first two beats, whose intervals are not all known.
std::vector<float> rr_pattern_changes(const float* rr_seconds, size_t beats);

}  // namespace hlm
