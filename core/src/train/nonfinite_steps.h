// Steps whose loss or gradient norm is NaN or infinite are never applied: one AdamW update
// with such a gradient carries it into every weight and both moments, and every later step
// and checkpoint inherits it. Up to max_skipped of them in a run are skipped (the batch is
// used up, the weights stay as they were); the next one stops the run with Diverged, which
// names the step and the newest checkpoint, the last good state, which is left as it is.
#pragma once
#include <cstdint>
#include <string>

#include "hlm/errors.h"

namespace hlm {

// The run stopped because its loss or gradients were not finite (see NonFiniteSteps).
class Diverged : public Error {
 public:
  using Error::Error;
};
// The exit status of a rank that stopped with Diverged: EX_DATAERR. A launcher does not
// restart such a rank, since the same data and weights give the same step again.
constexpr int kExitDiverged = 65;

class NonFiniteSteps {
 public:
  // skipped_before: steps skipped by the run segments before a resume (from the checkpoint).
  NonFiniteSteps(int64_t max_skipped, std::string checkpoint_dir, int64_t skipped_before = 0)
      : max_skipped_(max_skipped),
        checkpoint_dir_(std::move(checkpoint_dir)),
        skipped_(skipped_before) {}

  // Whether `step` (1-based) may be applied; false to skip it. Throws Diverged when it would
  // be one skip more than max_skipped. Every rank must pass the same values (the all-reduced
  // gradient norm and the ranks' agreed vote on the loss) so that all of them decide alike.
  bool admit(int64_t step, bool loss_finite, double gradient_norm);

  int64_t skipped() const { return skipped_; }

 private:
  int64_t max_skipped_;
  std::string checkpoint_dir_;
  int64_t skipped_;
};

}  // namespace hlm
