// All-reduce timings of a process group (see fabric_probe.h).
#include "distributed/fabric_probe.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include "hlm/util.h"
#include "scaling/scaling_math.h"

namespace hlm {
namespace {

// Median seconds of `repeats` all-reduces of `floats` float32 values, after two unmeasured.
double median_allreduce_seconds(const c10::intrusive_ptr<c10d::Backend>& group, int64_t floats,
                                int repeats, const torch::Device& device) {
  std::vector<at::Tensor> tensors{torch::ones({floats}, torch::TensorOptions().device(device))};
  std::vector<double> seconds;
  for (int i = 0; i < repeats + 2; ++i) {
    group->barrier()->wait();  // every rank starts together: the time is the operation's
    const double start = now_seconds();
    group->allreduce(tensors)->wait();
    if (device.is_cuda()) torch::cuda::synchronize(device.index());  // NCCL's wait is queued
    if (i >= 2) seconds.push_back(now_seconds() - start);
  }
  return spread_of(seconds).median;
}

}  // namespace

nlohmann::json probe_fabric(const c10::intrusive_ptr<c10d::Backend>& group,
                            const torch::Device& device, int64_t large_bytes) {
  const int64_t large_floats = std::max<int64_t>(2, large_bytes / 4);
  return {{"ranks", group->getSize()},
          {"small_bytes", 4},
          {"small_seconds", median_allreduce_seconds(group, 1, 30, device)},
          {"large_bytes", large_floats * 4},
          {"large_seconds", median_allreduce_seconds(group, large_floats, 7, device)}};
}

}  // namespace hlm
