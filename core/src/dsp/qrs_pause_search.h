// The QRS detector's last pass: a beat missed inside a pause, found against what the record's
// own beats are followed by.
#pragma once
#include <vector>

#include "dsp/qrs_fusion.h"
#include "dsp/qrs_pause_waves.h"

namespace hlm::dsp::qrs {

// What the pass reads: the fused envelopes, both at kRateHz: the main band (fused.energy) and
// the slow band (fused_slow); and each lead's signed slow band with its weights.
struct Envelopes {
  const std::vector<float>& main;
  const std::vector<float>& slow;
  LeadWaves waves;
};

// A pause (1.5 sinus intervals or more; after a premature beat, only one longer than its full
// compensatory pause, and only when that beat's own waves are the regular beats' for its first
// 0.2 s: it came early on the rhythm's swings) may hide a beat the thresholds turned away: a small
// or wide ventricular beat, or one late on the T wave, with its compensatory pause. Each beat is
// followed by much the same waves (its T wave, then the baseline up to the next P wave), so the
// envelopes a pause is expected to hold are the medians, sample by sample after the R peak, of the
// newest 15 regular beats (not premature, followed by no more than 1.3 sinus intervals; each
// read up to 0.3 s before its next beat) that reach that far, out of the last 60. The highest point
// that stands above that expectation in the pause, from 0.2 s after its first beat to 0.3 s before
// its last (or to the record's end), is a beat when it is clearly taller than what the regular
// beats leave unexplained themselves, tall enough in both bands, and a wave of its own. The stretch
// a record ends in is searched as well when it is shorter than a pause (its pause the end cuts
// off), for a premature beat the record shows whole. Where the envelopes miss it (a small wide beat
// on the T wave's tail stands barely above the T wave's energy), the waves themselves are compared
// the same way (qrs_pause_waves.h), with the T wave allowed to come later after a longer interval;
// a wave there that adds nothing to the slow envelope (as a T wave that moved does) is a beat only
// with the form of the record's newest premature beats (qrs_ectopic_forms.h: those the thresholds
// took, and those this search found standing clear in both envelopes); see the constants in
// qrs_pause_search_impl.h. The sinus interval is followed causally (qrs_sinus_interval.h), and a
// found beat splits its pause, so bigeminy whose ventricular beats all go unseen by the thresholds
// does not become the rhythm; eight unexplained pauses in a row do (a halved rate, 2:1 AV block).
// The spans around premature beats measure it too: bigeminy taken for the rhythm from a record's
// first beats, with some of its ventricular beats found, is halved back, and a first interval made
// too long by missed premature beats is shortened before a sinus interval confirms it; the second
// walk (after the look-ahead below) starts from the interval the first held when one did. A pause
// with fewer than 15 regular beats before it is read against those and the record's first regular
// beats after it, read ahead, where the record holds 60; a wave's form, while the record has shown
// fewer than 32 premature beats before it, against the first ones after it too. A gap short of
// a pause after a regular beat, before a beat 1.05 sinus intervals or more after it, is searched
// the same way, up to 0.15 s before that beat: a ventricular run whose first beat the thresholds
// took for the T wave makes its second look late (that beat may be one a pause search just found,
// the taller of a couplet the thresholds missed whole). A wave found there is taken only near the
// gap's middle, as tall as half that beat in the main band, and with that beat's own form; before
// a beat on time (not premature, short of 1.05, or after a premature beat), with that beat's form
// closely, or with its form and the form of the record's premature beats. The gap after a
// premature beat, 0.85 sinus intervals or more (a triplet's first and third beats lie as little
// as one sinus interval apart), is read for the next beat of its run: the main band's highest point
// one coupling interval after the beat, else near the gap's middle, a wave of its own, as tall as
// half the beat, of its form and of the form of the record's premature beats, or of its form
// closely (a run of a form the record has shown too seldom before); a beat found there that is
// premature in turn is read after too (a triplet's third). A beat a pause search found with a pause
// still before it has that pause searched again, up to three searches of one pause (a triplet the
// thresholds missed whole); a wave there in the waves alone is a beat too with that beat's form
// closely and half its height in the main band, where the record's premature beats have not shown
// the form.
std::vector<Candidate> find_beats_in_pauses(const std::vector<Candidate>& beats,
                                            const Envelopes& envelopes);

}  // namespace hlm::dsp::qrs
