// Double-buffered batch assembly (see batch_prefetcher.h).
#include "train/batch_prefetcher.h"

namespace hlm {
namespace {

BatchPrefetcher::Batch empty_batch(const WindowSampler& sampler, int64_t rows, bool pinned) {
  const auto options = torch::TensorOptions().dtype(torch::kLong).pinned_memory(pinned);
  return {torch::empty({rows, sampler.context()}, options),
          torch::empty({rows, sampler.context()}, options)};
}

}  // namespace

BatchPrefetcher::BatchPrefetcher(const WindowSampler& sampler, int64_t rows,
                                 std::function<uint64_t(int64_t)> first_sample, int64_t start,
                                 bool pinned)
    : buffers_(
          empty_batch(sampler, rows, pinned), empty_batch(sampler, rows, pinned),
          [&sampler, first_sample = std::move(first_sample)](int64_t k, Batch& batch) {
            sampler.fill(first_sample(k), batch.inputs, batch.targets);
          },
          start) {}

}  // namespace hlm
