// How sensitive a classifier is for one class at a given positive predictivity or specificity.
// Published classifiers each report one operating point: the beat classifiers most of them
// with S sensitivity high and +P low, the AF detectors a sensitivity at some specificity. Two
// methods compare fairly only with one of the figures held equal. The curve here is made the
// way the operating point of a probabilistic classifier moves: the class's probability
// multiplied by a factor before the most probable class is taken. An item is then called the
// class when factor x its probability exceeds the largest of the others', i.e. when their
// ratio exceeds 1 / factor, so sorting the items by that ratio gives every point of the curve
// at once.
//
// The factor is read off the very items scored: like AUROC, the result is a property of the
// curve, not an operating point fixed in advance.
#pragma once
#include <cstddef>
#include <vector>

#include "eval/classification_metrics.h"

namespace hlm::eval {

// Items as parallel arrays: item i's class probabilities, reference class, and record
// (0 .. records - 1, for the bootstrap by record).
struct ProbabilityItems {
  std::vector<std::vector<float>> probs;
  std::vector<size_t> truth;
  std::vector<size_t> record;
  size_t records = 0;
};

// The figure held at or above a published value while Se is made as high as it goes.
enum class Held { kPpv, kSpecificity };
const char* held_name(Held held);  // "ppv", "specificity"

struct PointOnCurve {
  bool reached = false;  // some factor holds the figure at or above its target
  // The highest Se over the factors that hold the figure at or above the target, and of the
  // points with that Se the one where the held figure is highest; 0 when no factor that
  // finds an item of the class reaches the target; NaN when the class has no reference item
  // or, with specificity held, when every item is of the class. The +P, specificity, factor
  // and accuracy (every item, every class) of that point are NaN when it is not reached. The
  // factor lies strictly inside the range of factors that give the point (between the ratios
  // of the last item called and the next).
  double se = 0, ppv = 0, specificity = 0, factor = 0, accuracy = 0;
  // Resampling records: a resample that cannot reach the target counts Se 0; one where Se is
  // NaN (above) is left out.
  Interval se_ci95;
};

// Class `cls` against the rest, where items of the `excused` reference classes called `cls`
// count in no cell: neither as true or false positives nor as true negatives (EC57: fusion and
// Q beats called V, Q beats called S; see ectopic_scores). Throws InternalError on arrays of
// unequal length, fewer than two classes, a class or record out of range, a probability that
// is negative or not finite, or a target outside (0, 1]: the callers check what users give.
PointOnCurve sensitivity_at(const ProbabilityItems& items, size_t cls,
                            const std::vector<size_t>& excused, Held held, double target,
                            int resamples = 1000);

}  // namespace hlm::eval
