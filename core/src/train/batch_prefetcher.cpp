// Double-buffered batch assembly (see batch_prefetcher.h).
#include "train/batch_prefetcher.h"

namespace hlm {
namespace {

BatchPrefetcher::Batch empty_batch(const WindowSampler& sampler, int64_t rows) {
  return {torch::empty({rows, sampler.context()}, torch::kLong),
          torch::empty({rows, sampler.context()}, torch::kLong)};
}

}  // namespace

BatchPrefetcher::BatchPrefetcher(const WindowSampler& sampler, int64_t rows,
                                 std::function<uint64_t(int64_t)> first_sample, int64_t start)
    : buffers_(
          empty_batch(sampler, rows), empty_batch(sampler, rows),
          [&sampler, first_sample = std::move(first_sample)](int64_t k, Batch& batch) {
            sampler.fill(first_sample(k), batch.inputs, batch.targets);
          },
          start) {}

}  // namespace hlm
