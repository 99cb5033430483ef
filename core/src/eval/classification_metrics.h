// Scores of a classifier against reference labels, as the arrhythmia literature reports them:
// per class sensitivity (Se), positive predictivity (+P), specificity and F1; accuracy, macro
// F1 and the majority-class baseline; the mean F1 of chosen classes (the PhysioNet/CinC
// Challenge 2017 score is that of N, A and O); AUROC for a binary task; and bootstrap
// confidence intervals that resample records, not beats, because the beats of one patient are
// not independent draws.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace hlm::eval {

// Counts of (reference class, predicted class) pairs over classes 0 .. classes - 1.
class Confusion {
 public:
  explicit Confusion(size_t classes);
  void add(size_t truth, size_t predicted, int64_t count = 1);
  Confusion& operator+=(const Confusion& other);
  bool operator==(const Confusion& other) const {  // the same classes and counts
    return classes_ == other.classes_ && counts_ == other.counts_;
  }
  bool operator!=(const Confusion& other) const { return !(*this == other); }

  size_t classes() const { return classes_; }
  int64_t at(size_t truth, size_t predicted) const { return counts_[truth * classes_ + predicted]; }
  int64_t total() const;
  int64_t support(size_t c) const;    // reference items of class c (its row)
  int64_t predicted(size_t c) const;  // items predicted as c (its column)

 private:
  size_t classes_;
  std::vector<int64_t> counts_;
};

// One class against the rest. A ratio without a denominator is NaN: Se of a class with no
// reference items, +P of a class never predicted. F1 is 2 TP / (support + predicted), 0 for a
// class that has items but is never predicted, NaN for a class absent from both sides.
struct ClassScores {
  int64_t support = 0, predicted = 0, tp = 0;
  double se = 0, ppv = 0, specificity = 0, f1 = 0;
};
ClassScores class_scores(const Confusion& m, size_t c);

// Ectopic beat statistics as ANSI/AAMI EC57 counts them (WFDB's bxb implements it), the way
// the beat classification literature reports ventricular (VEB) and supraventricular (SVEB)
// ectopic beats, over the items of a confusion matrix: in hlm, the beats the detector found and
// matched to a reference beat (bxb also counts reference beats the detector missed, and extra
// detections, which hlm's scores leave out). They differ from one class against the rest in what a
// false positive is: a fusion beat (F, part ventricular) or an unclassifiable one (Q) called V is
// not a VEB false positive, and a Q beat called S is not an SVEB one; those beats count neither as
// false nor as true negatives. Sensitivity is one class against the rest: a V beat called F is
// missed.
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

double accuracy(const Confusion& m);  // NaN when empty
// Mean F1 over the classes that have reference items (a class absent from the reference
// does not count; one never predicted counts as 0).
double macro_f1(const Confusion& m);
// Mean F1 over the given classes, each as in class_scores (0 when it has no items at all):
// the Challenge 2017 score is mean_f1 of N, A and O.
double mean_f1(const Confusion& m, const std::vector<size_t>& classes);
// The most frequent reference class, and the accuracy of always answering it.
size_t majority_class(const Confusion& m);
double majority_baseline(const Confusion& m);
// The same reference items, every one called class c: what always answering c scores, by any
// metric of a matrix (the majority-class baseline of every table is this with c the majority).
Confusion always_answering(const Confusion& m, size_t c);

// Area under the ROC curve of scores for positives (label 1) against negatives (label 0): the
// probability that a random positive scores above a random negative, ties counting half.
// NaN without both a positive and a negative.
double auroc(const std::vector<double>& scores, const std::vector<int>& labels);

// The records' matrices summed: every item of them in one matrix of `classes` classes.
Confusion pooled(const std::vector<Confusion>& per_record, size_t classes);

struct Interval {
  double low = 0, high = 0;
};
// Percentile interval (level, e.g. 0.95) of metric over `resamples` bootstrap samples, each as
// many records as given, drawn with replacement from per_record and pooled. Samples where the
// metric is NaN are left out. Seeded: the same inputs give the same interval.
Interval bootstrap_by_record(const std::vector<Confusion>& per_record,
                             const std::function<double(const Confusion&)>& metric,
                             int resamples = 1000, double level = 0.95, uint64_t seed = 1);

// Percentile interval (level) of sample(drawn) over `resamples` draws of record indices
// 0 .. records - 1, with replacement, each as many as there are records: the bootstrap by
// record for a metric that needs more than each record's confusion matrix. NaN values are left
// out. Seeded: the same inputs give the same interval.
Interval bootstrap_records(size_t records,
                           const std::function<double(const std::vector<size_t>& drawn)>& sample,
                           int resamples = 1000, double level = 0.95, uint64_t seed = 1);

// Percentile interval of metric(a) - metric(b) for two classifiers scored on the same records
// (a[k] and b[k] are record k's matrices): each sample draws the same records for both, so
// what they share, the records' difficulty, cancels (a paired bootstrap). An interval that
// excludes 0 says a beats b (or b beats a) beyond record-to-record chance. Throws
// std::invalid_argument when a and b differ in size.
Interval bootstrap_difference_by_record(const std::vector<Confusion>& a,
                                        const std::vector<Confusion>& b,
                                        const std::function<double(const Confusion&)>& metric,
                                        int resamples = 1000, double level = 0.95,
                                        uint64_t seed = 1);

}  // namespace hlm::eval
