// The forward and backward of one micro-batch captured once in a CUDA graph and replayed for
// every later micro-batch (the `cuda_graph` training option). A small model's step on a GPU
// is hundreds of short kernels, and launching them from the CPU takes longer than running
// them; a replay launches them all at once.
//
// What a replay needs stays put between replays: the batch is copied into the graph's own
// input tensors, the loss lands in the same tensor each time, and backward adds into the
// parameters' gradient tensors in place. So the gradients must be zeroed (zero_gradients),
// never dropped, while a StepGraph is in use. Capture runs three eager passes first on a side
// stream (LibTorch's lazy set-up must not happen inside the graph) and gives back their dropout
// draws, so the graph's first replay draws what an eager step would. One rank per process group:
// the gradient all-reduce of several ranks runs from backward hooks, which a replay does not call.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace hlm {

class StepGraph {
 public:
  // `loss` maps a device batch (inputs, targets) to the scalar loss whose backward the graph
  // records; `params` are the parameters whose gradients backward fills.
  using LossFn = std::function<at::Tensor(const at::Tensor& inputs, const at::Tensor& targets)>;
  StepGraph(LossFn loss, std::vector<at::Tensor> params, const torch::Device& device);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  // Copies the batch (CPU tensors, of the same shape every call) to the graph's inputs, runs
  // forward and backward, and returns the loss: a tensor the next call overwrites. The first
  // call warms up and captures, leaving the gradients as one eager backward would.
  at::Tensor forward_backward(const at::Tensor& inputs, const at::Tensor& targets);

 private:
  struct Captured;
  void capture(const at::Tensor& inputs, const at::Tensor& targets);

  LossFn loss_;
  std::vector<at::Tensor> params_;
  torch::Device device_;
  std::unique_ptr<Captured> captured_;
};

// Sets every gradient of `params` there is to zero in place (a parameter without one keeps
// none): what StepGraph needs in place of drop_gradients, since a replay adds into the
// gradient tensors it captured.
void zero_gradients(const std::vector<at::Tensor>& params);

// Refuses the cuda_graph option where it cannot act: a stage whose device is not a GPU, or a
// process group of several ranks. `stage` names the stage in the message.
void check_cuda_graph(bool cuda_graph, const torch::Device& device, int world_size,
                      const std::string& stage);

}  // namespace hlm
