// Ectopic beat statistics as ANSI/AAMI EC57 counts them (WFDB's bxb implements it), the way
// the beat classification literature reports ventricular (VEB) and supraventricular (SVEB)
// ectopic beats, over the items of a confusion matrix: in hlm, the beats the detector found and
// matched to a reference beat (bxb also counts reference beats the detector missed, and extra
// detections, which hlm's scores leave out). They differ from one class against the rest in what a
// false positive is: a fusion beat (F, part ventricular) or an unclassifiable one (Q) called V is
// not a VEB false positive, and a Q beat called S is not an SVEB one; those beats count neither as
// false nor as true negatives. Sensitivity is one class against the rest: a V beat called F is
// missed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eval/classification_metrics.h"

namespace hlm::eval {

struct EctopicScores {
  int64_t tp = 0, fn = 0, fp = 0, tn = 0;
  double se = 0, ppv = 0, fpr = 0;  // NaN without a denominator
};

// Class `ectopic` against the rest, where items of the `excused` reference classes predicted
// as `ectopic` count in no cell. bxb: VEB is ectopic V excused {F, Q}; SVEB is S excused {Q}.
// FPR is FP / (FP + TN), TN every item outside the class's row and column (bxb prints it for
// VEB only; for SVEB it is the same rule, this project's own).
EctopicScores ectopic_scores(const Confusion& m, size_t ectopic,
                             const std::vector<size_t>& excused);

}  // namespace hlm::eval
