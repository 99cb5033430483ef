// Devices of the training loop (see train_device.h).
#include "train/train_device.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "device/device.h"
#include "hlm/backend.h"
#include "hlm/util.h"
#include "ops/compute.h"

#if HLM_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace hlm {

void reset_peak_memory(const torch::Device& device) {
#if HLM_WITH_CUDA
  if (device.is_cuda())
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
#else
  (void)device;
#endif
}

torch::Device rank_device(const std::string& requested, int local_rank, const std::string& stage) {
  const GpuProbe gpus = probe_gpus();
  if (resolve_device(requested, gpus, stage) == "cpu") return torch::Device(torch::kCPU);
  return torch::Device(torch::kCUDA,
                       c10::DeviceIndex(gpu_of_local_rank(std::max(0, local_rank), gpus.visible)));
}

int nvml_index_of(const torch::Device& device, const char* visible) {
  if (!device.is_cuda()) return -1;
  const int cuda_index = std::max<int>(0, device.index());
  if (visible == nullptr) return cuda_index;
  std::vector<int> listed;
  std::istringstream entries(visible);
  for (std::string entry; std::getline(entries, entry, ',');) {
    if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos) return -1;
    listed.push_back(std::stoi(entry));
  }
  return cuda_index < int(listed.size()) ? listed[size_t(cuda_index)] : -1;
}

torch::Device device_of(const torch::nn::Module& module) {
  const auto params = module.parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

at::Tensor to_device(const at::Tensor& host, const torch::Device& device) {
  if (device.is_cpu()) return host;
  return host.to(device, /*non_blocking=*/true);
}

void wait_for_device(const torch::Device& device) {
  // The current stream only: NCCL's all-reduce runs on streams of its own, timed apart.
  if (device.is_cuda())
    c10::impl::getDeviceGuardImpl(device.type())->getStream(device).synchronize();
}

double device_peak_flops(const torch::Device& device, bool bf16) {
  if (device.is_cpu()) return measure_peak_flops(bf16);
  torch::NoGradGuard no_grad;
  const int64_t n = 8192;  // large enough to reach the tensor cores' rate
  const auto options =
      torch::TensorOptions().device(device).dtype(bf16 ? torch::kBFloat16 : torch::kFloat32);
  // Its own generator on the CPU, as measure_peak_flops: the default CUDA one draws dropout.
  at::Generator generator = at::detail::createCPUGenerator(/*seed_val=*/0);
  const auto a = torch::randn({n, n}, generator).to(options);
  const auto b = torch::randn({n, n}, generator).to(options);
  torch::matmul(a, b);  // warm-up: cuBLAS picks its kernel
  wait_for_device(device);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const double start = now_seconds();
    torch::matmul(a, b);
    wait_for_device(device);
    best = std::min(best, now_seconds() - start);
  }
  return 2.0 * double(n) * double(n) * double(n) / best;
}

std::string out_of_memory_message(const std::string& stage, int64_t batch, int64_t window,
                                  const torch::Device& device, const std::string& what) {
  std::string first_line = what.substr(0, what.find('\n'));
  return fmt::format(
      "stage '{}': {} ran out of memory with batch {} x window {} ({}). Lower {}.batch (and "
      "raise {}.accumulation to keep the tokens per step), turn on {}.bf16, or use a smaller "
      "model's context or d_model; the newest checkpoint is kept, and hlm run --resume RUN "
      "continues from it",
      stage, device.str(), batch, window, first_line, stage, stage, stage);
}

}  // namespace hlm
