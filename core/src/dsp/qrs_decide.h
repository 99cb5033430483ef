// The QRS detector's decision stage: which candidate peaks of the fused envelope are beats.
#pragma once
#include <vector>

#include "dsp/qrs_fusion.h"
#include "hlm/dsp/qrs.h"

namespace hlm::dsp::qrs {

// Walks the candidates in time order: a candidate is a beat when it clears a threshold between
// the medians of the last 8 beat and noise heights (the lower middle beat height where the two
// middle ones differ more than twofold: two kinds of beat), is not within the refractory period,
// and is not a T wave (close, flat and low); a bigger peak within the refractory period replaces
// the beat before it; a long gap is searched again at half the threshold. An ectopic path lets
// through a candidate below the threshold, beyond the T wave's reach of the last beat, that is
// at least half as tall as the beats in the slow band, clears a lower threshold (a twentieth
// of the way from the noise, and twice the noise, once the noise level is measured) and is
// followed by a pause: wide or small ventricular beats. Inside the T wave's reach that path
// opens only on search-back, in a gap of more than 1.5 sinus intervals after a beat that was
// not premature: a PVC coupled so early that the T-wave rule took it, and the compensatory
// pause after it. There the candidate must also stand a quarter taller in the slow band than
// the sinus beats' own T waves. A candidate found by search-back leaves the noise level it was
// counted in. A gap twice as long as search-back's in which even search-back found nothing, and
// which holds recurring peaks that are not T waves and stand three times the noise level,
// restarts the beat levels at the tallest of them and takes the first as a beat: artefacts taken
// for beats can raise the median of the last 8 heights above every beat after them, and only
// beats taken lower it again. Finally, weak beats that split one normal interval in two are
// dropped (see prune_split_intervals).
std::vector<Candidate> decide(const std::vector<Candidate>& candidates, const QrsOptions& options);

// Drops a beat that is weaker than its 10 neighbours (< 0.7 of their median height), early
// (< 0.8 of their median RR) and followed by a strong beat (>= 0.8) such that the two
// intervals around it add up to about one (< 1.1): noise splitting an interval. Premature
// beats are followed by a pause, and interpolated ones are rare. Also drops a weak beat less
// than 0.25 s before a strong one, after a gap more than twice the one after it: a P wave or
// the complex's onset splitting the interval late.
std::vector<Candidate> prune_split_intervals(const std::vector<Candidate>& beats);

}  // namespace hlm::dsp::qrs
