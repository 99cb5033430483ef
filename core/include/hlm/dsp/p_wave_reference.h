// Each beat's P wave against the P wave of its record's late beats. A supraventricular
// premature beat starts from another atrial focus, so its P wave (or the T wave it falls on)
// differs from the sinus one. A reference made of the record's typical beat cannot show it
// where such beats are most of the record (as in MIT-BIH 232): the typical beat is then one of
// them. The beats that end the longest intervals are the least likely to be premature, whatever
// their share, so their median P wave is the reference here (docs/notebook/clinical-log.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/dsp/beat_window.h"

namespace hlm {

// The share of a record's beats, those with the longest RR interval before them, whose median P
// wave is the reference. A fifth or a third let the reference fall on atrial premature beats
// in DS1 records thinned until those were most of the beats (the notebook).
constexpr double kLateBeatShare = 0.1;

// The late beats: of the beats with a window (row_of_beat >= 0) and an interval before them
// (rr_seconds > 0), the kLateBeatShare with the longest interval (at least one), in beat order;
// ties keep the earlier beat. Empty when no beat qualifies.
std::vector<size_t> late_beats(const std::vector<float>& rr_seconds,
                               const std::vector<int64_t>& row_of_beat);

// Whether windows cut with these options reach the P wave (kPWaveSeconds) with at least 3
// points in it.
bool covers_p_wave(const dsp::BeatWindowOptions& window);

// Per beat, the correlation of its window's P wave part (hlm/dsp/template_descriptors.h's
// kPWaveSeconds) with the point-by-point median of the P wave parts of `late` (late_beats).
// A beat without a window, and every beat when no late beat has one, reads 1: no difference,
// as the other descriptors give a beat without a window its template. windows: rows of
// window.points values (hlm/dsp/beat_window.h); InternalError unless covers_p_wave(window).
std::vector<float> late_p_wave_correlations(const float* windows,
                                            const dsp::BeatWindowOptions& window,
                                            const std::vector<int64_t>& row_of_beat,
                                            const std::vector<size_t>& late);

// The descriptor's name for the `lead`-th lead of the shape descriptors (0: the tokenized one).
std::string late_p_wave_descriptor_name(int lead);

}  // namespace hlm
