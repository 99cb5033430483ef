// What differs in the training loop between a CPU rank and a CUDA rank: which device the
// model and batches live on, how a batch gets there, how the clock waits for queued work,
// and what running out of GPU memory tells the user.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hlm {

// The device a rank trains on: "cpu", or "cuda" on the visible GPU of its local rank
// (hlm::gpu_of_local_rank; CUDA_VISIBLE_DEVICES applies). `requested` is the stage's
// `device` param (auto, cpu or cuda), resolved here again because a rank may run on
// another host than the one that validated the workflow. Throws ConfigError naming the
// stage when cuda is asked for and this host shows no GPU.
torch::Device rank_device(const std::string& requested, int local_rank, const std::string& stage);

// NVML's index of the GPU `device` names (NVML counts every GPU of the host; CUDA only those
// CUDA_VISIBLE_DEVICES lists, given here as `visible`, null when unset); -1 for the CPU or a
// list NVML's index cannot be read from (GPU UUIDs).
int nvml_index_of(const torch::Device& device, const char* visible);

// Where a module's weights are (the CPU for a module without parameters).
torch::Device device_of(const torch::nn::Module& module);

// A batch tensor on `device`: itself on the CPU; on a GPU an asynchronous copy, which
// overlaps with work queued before it when `host` is in pinned memory.
at::Tensor to_device(const at::Tensor& host, const torch::Device& device);

// Waits until the work queued on `device`'s current stream is done (CUDA); nothing on the
// CPU. Step clocks call it so that a phase's time is the GPU's, not the time to queue it.
void wait_for_device(const torch::Device& device);

// Peak FLOP/s of a large matrix product on `device` (float32, or bfloat16 when bf16): the
// denominator of model FLOPs utilisation. On the CPU, measure_peak_flops (ops/compute.h).
double device_peak_flops(const torch::Device& device, bool bf16);

// Starts the caching allocator's peak memory count of `device` again (GpuUsage reports it), so
// that what ran before training (the peak FLOP/s probe's matrices) is not counted; nothing on
// the CPU.
void reset_peak_memory(const torch::Device& device);

// The message for a GPU that ran out of memory during a stage: the stage, batch and window
// that needed more, the device's memory, and what to lower. `what` is LibTorch's message.
std::string out_of_memory_message(const std::string& stage, int64_t batch, int64_t window,
                                  const torch::Device& device, const std::string& what);

}  // namespace hlm
