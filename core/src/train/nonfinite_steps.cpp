// Skipping or stopping on non-finite steps (see nonfinite_steps.h).
#include "train/nonfinite_steps.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "train/checkpoint_layout.h"

namespace hlm {
namespace {

// What a resume would start from, in words.
std::string newest_checkpoint_words(const std::string& dir) {
  const std::string newest = latest_checkpoint(dir);
  if (newest.empty())
    return "no checkpoint was written before it (set checkpoint_every to keep some)";
  return "the newest checkpoint, " + newest + ", is kept as it was and a resume starts from it";
}
}  // namespace

bool NonFiniteSteps::admit(int64_t step, bool loss_finite, double gradient_norm) {
  if (loss_finite && std::isfinite(gradient_norm)) return true;
  const std::string what = !loss_finite ? "the loss is not finite"
                                        : "the gradient norm is " + std::to_string(gradient_norm);
  if (skipped_ >= max_skipped_)
    throw Diverged(
        "step {}: {}; the step was not applied and the run stopped ({} of at most {} such steps "
        "skipped before); {}. Lower lr, raise warmup_steps or set grad_clip, or allow skips "
        "with max_skipped_steps",
        step, what, skipped_, max_skipped_, newest_checkpoint_words(checkpoint_dir_));
  ++skipped_;
  spdlog::warn("step {}: {}; the step was skipped, the weights are unchanged ({} of at most {})",
               step, what, skipped_, max_skipped_);
  return false;
}

}  // namespace hlm
