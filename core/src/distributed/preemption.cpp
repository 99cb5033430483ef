// The stop flag's agreement across ranks (see preemption.h).
#include "distributed/preemption.h"

#include <torch/torch.h>

namespace hlm {

bool stop_requested(const c10::intrusive_ptr<c10d::Backend>& group) {
  const bool stop = stop_signal_received();
  if (!group) return stop;
  // Ranks get the signal at slightly different times: all stop at the same step or none.
  std::vector<at::Tensor> flag{torch::full({1}, int(stop), torch::kInt)};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  group->allreduce(flag, options)->wait();
  return flag[0].item<int>() != 0;
}

}  // namespace hlm
