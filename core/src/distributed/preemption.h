// Graceful stop: SIGTERM or SIGUSR1 (SLURM's warning before the time limit) set a flag; the
// trainer checkpoints at the next step boundary and exits with kExitRequeue.
#pragma once
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "hlm/errors.h"
#include "util/stop_signal.h"

namespace hlm {

constexpr int kExitRequeue = 75;  // EX_TEMPFAIL: "try again", what schedulers requeue on

// True when this rank or (with a group) any rank got a stop signal. Collective with a group.
bool stop_requested(const c10::intrusive_ptr<c10d::Backend>& group);

// Thrown by the trainer after it checkpointed because of a stop signal.
class Preempted : public Error {
 public:
  using Error::Error;
};

}  // namespace hlm
