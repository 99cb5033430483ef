// EC57 ectopic beat statistics (see ec57.h).
#include "eval/ec57.h"

#include <algorithm>
#include <limits>

namespace hlm::eval {
namespace {

double ratio(int64_t a, int64_t b) {
  return b > 0 ? double(a) / double(b) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

EctopicScores ectopic_scores(const Confusion& m, size_t ectopic,
                             const std::vector<size_t>& excused) {
  EctopicScores s;
  for (size_t t = 0; t < m.classes(); ++t)
    for (size_t p = 0; p < m.classes(); ++p) {
      const int64_t n = m.at(t, p);
      if (t == ectopic)
        (p == ectopic ? s.tp : s.fn) += n;
      else if (p == ectopic) {
        if (std::find(excused.begin(), excused.end(), t) == excused.end()) s.fp += n;
      } else
        s.tn += n;
    }
  s.se = ratio(s.tp, s.tp + s.fn);
  s.ppv = ratio(s.tp, s.tp + s.fp);
  s.fpr = ratio(s.fp, s.fp + s.tn);
  return s;
}

}  // namespace hlm::eval
