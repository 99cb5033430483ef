// Forward and backward captured in a CUDA graph (see step_graph.h).
#include "train/step_graph.h"

#include <ATen/autocast_mode.h>

#include "hlm/cuda_graph.h"
#include "hlm/errors.h"

#if HLM_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace hlm {

void check_cuda_graph(bool cuda_graph, const torch::Device& device, int world_size,
                      const std::string& stage) {
  if (!cuda_graph) return;
  if (!device.is_cuda())
    throw ConfigError(
        "stage '{}': cuda_graph: true captures the training step on a GPU, but the stage runs "
        "on {}; set {}.device=cuda on a GPU node, or {}.cuda_graph=false",
        stage, device.str(), stage, stage);
  if (world_size > 1)
    throw ConfigError(
        "stage '{}': cuda_graph: true runs one rank per process group ({} ranks here: their "
        "gradient all-reduce starts from backward hooks, which a graph replay does not call); "
        "set {}.cuda_graph=false",
        stage, world_size, stage);
  if (HLM_WITH_CUDA == 0)
    throw ConfigError("stage '{}': cuda_graph: true needs a LibTorch built with CUDA", stage);
}

void zero_gradients(const std::vector<at::Tensor>& params) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params)
    if (p.grad().defined()) p.mutable_grad().zero_();
}

#if HLM_WITH_CUDA

struct StepGraph::Captured {
  at::cuda::CUDAGraph graph;
  at::Tensor inputs, targets, loss;  // the graph's own tensors: copied into, read from
};

namespace {

// Eager forward and backward passes before capture: LibTorch's lazy set-up (cuBLAS handles
// and workspaces, autograd's device threads) must not happen inside the graph.
constexpr int kWarmUpPasses = 3;

// Autocast's weight cache must be off while capturing (a cached cast made during capture
// would be freed with the capture's memory); restored when the scope ends.
class AutocastCacheOff {
 public:
  AutocastCacheOff() : was_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(was_); }
  AutocastCacheOff(const AutocastCacheOff&) = delete;
  AutocastCacheOff& operator=(const AutocastCacheOff&) = delete;

 private:
  bool was_;
};

// `waiting` runs nothing until the work queued on `queued` so far is done.
void wait_stream(const c10::cuda::CUDAStream& waiting, const c10::cuda::CUDAStream& queued) {
  c10::cuda::CUDAEvent event;
  event.record(queued);
  event.block(waiting);
}

}  // namespace

void StepGraph::capture(const at::Tensor& inputs, const at::Tensor& targets) {
  auto c = std::make_unique<Captured>();
  c->inputs = torch::empty(inputs.sizes(), inputs.options().device(device_));
  c->targets = torch::empty(targets.sizes(), targets.options().device(device_));
  c->inputs.copy_(inputs);
  c->targets.copy_(targets);
  // Warm-up gives a gradient to exactly the parameters the loss reaches; an unused one keeps
  // none, so AdamW skips it as in eager steps.
  for (const auto& p : params_) p.mutable_grad() = at::Tensor();
  // The warm-up's dropout draws are given back, so capture starts where an eager step would.
  at::Generator generator = at::cuda::detail::getDefaultCUDAGenerator(device_.index());
  const at::Tensor random_state = generator.get_state();

  const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(device_.index());
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, device_.index());
  wait_stream(side, main);
  {
    const c10::cuda::CUDAStreamGuard on_side(side);  // capture may not use the default stream
    const AutocastCacheOff no_cache;
    const GraphSafeForward same_path;  // warm-up and capture take one path through the model
    for (int i = 0; i < kWarmUpPasses; ++i) loss_(c->inputs, c->targets).backward();
    zero_gradients(params_);  // backward then adds into tensors that stay put
    generator.set_state(random_state);
    c->graph.capture_begin();
    try {
      c->loss = loss_(c->inputs, c->targets);
      c->loss.backward();
    } catch (...) {
      try {
        c->graph.capture_end();  // the stream stops capturing; the half graph is dropped
      } catch (...) {
      }
      throw;
    }
    c->graph.capture_end();
  }
  wait_stream(main, side);
  captured_ = std::move(c);
}

at::Tensor StepGraph::forward_backward(const at::Tensor& inputs, const at::Tensor& targets) {
  if (!captured_) capture(inputs, targets);
  Captured& c = *captured_;
  TORCH_CHECK(inputs.sizes() == c.inputs.sizes() && targets.sizes() == c.targets.sizes(),
              "a CUDA graph replays one batch shape; it was captured for ", c.inputs.sizes());
  c.inputs.copy_(inputs, /*non_blocking=*/true);
  c.targets.copy_(targets, /*non_blocking=*/true);
  c.graph.replay();
  return c.loss;
}

#else  // a LibTorch without CUDA: check_cuda_graph refuses the option before any StepGraph

struct StepGraph::Captured {};

void StepGraph::capture(const at::Tensor&, const at::Tensor&) {
  throw InternalError("StepGraph needs a LibTorch built with CUDA");
}

at::Tensor StepGraph::forward_backward(const at::Tensor& inputs, const at::Tensor& targets) {
  capture(inputs, targets);
  return {};
}

#endif

StepGraph::StepGraph(LossFn loss, std::vector<at::Tensor> params, const torch::Device& device)
    : loss_(std::move(loss)), params_(std::move(params)), device_(device) {}

StepGraph::~StepGraph() = default;

}  // namespace hlm
