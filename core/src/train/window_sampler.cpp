// Window sampling (see window_sampler.h).
#include "train/window_sampler.h"

#include <algorithm>

#include "hlm/errors.h"

namespace hlm {

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

WindowSampler::WindowSampler(const TokenStore& store, uint64_t begin, uint64_t end, int64_t context,
                             uint64_t seed)
    : store_(store), begin_(begin), context_(context), seed_(seed) {
  end = std::min<uint64_t>(end, store.token_count());
  if (end < begin + uint64_t(context) + 2)
    throw DataError(
        "token store has {} tokens in the training range, fewer than one window of {}; "
        "tokenize more records or lower the model's context",
        end > begin ? end - begin : 0, context + 1);
  range_ = end - begin - uint64_t(context);
}

uint64_t WindowSampler::window_start(uint64_t sample) const {
  return begin_ + splitmix64(seed_ * 0x100000001b3ULL ^ sample) % range_;
}

void WindowSampler::fill(uint64_t first_sample, at::Tensor& inputs, at::Tensor& targets) const {
  const int64_t rows = inputs.size(0);
  std::vector<int64_t> window(context_ + 1);
  auto* in = inputs.data_ptr<int64_t>();
  auto* out = targets.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    store_.copy_window(window_start(first_sample + r), window.size(), window.data());
    std::copy(window.begin(), window.end() - 1, in + r * context_);
    std::copy(window.begin() + 1, window.end(), out + r * context_);
  }
}

}  // namespace hlm
