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
    : WindowSampler({TokenSpan{&store, begin, end, 1.0}}, context, seed) {}

WindowSampler::WindowSampler(std::vector<TokenSpan> spans, int64_t context, uint64_t seed)
    : context_(context), seed_(seed) {
  double total = 0;
  for (const TokenSpan& s : spans) {
    const uint64_t end = std::min<uint64_t>(s.end, s.store->token_count());
    if (end < s.begin + uint64_t(context) + 2)
      throw DataError(
          "token store {} has {} tokens in the training range, fewer than one window of {}; "
          "tokenize more records or lower the model's context",
          s.store->path(), end > s.begin ? end - s.begin : 0, context + 1);
    ranges_.push_back({s.store, s.begin, end - s.begin - uint64_t(context)});
    total += std::max(0.0, s.weight);
    cumulative_.push_back(total);
  }
  if (!(total > 0)) throw DataError("token stores to sample from: no store has a positive weight");
  for (double& c : cumulative_) c /= total;
}

WindowSampler::Window WindowSampler::window(uint64_t sample) const {
  Window w;
  if (ranges_.size() > 1) {
    // A second draw of the same sample chooses the span, so the window's draw stays the one
    // a single store makes.
    const double u = double(splitmix64(~(seed_ * 0x100000001b3ULL ^ sample)) >> 11) * 0x1.0p-53;
    w.span =
        size_t(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin());
    w.span = std::min(w.span, ranges_.size() - 1);
  }
  const Range& r = ranges_[w.span];
  w.start = r.begin + splitmix64(seed_ * 0x100000001b3ULL ^ sample) % r.count;
  return w;
}

void WindowSampler::fill(uint64_t first_sample, at::Tensor& inputs, at::Tensor& targets) const {
  const int64_t rows = inputs.size(0);
  std::vector<int64_t> window(context_ + 1);
  auto* in = inputs.data_ptr<int64_t>();
  auto* out = targets.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const Window w = this->window(first_sample + r);
    ranges_[w.span].store->copy_window(w.start, window.size(), window.data());
    std::copy(window.begin(), window.end() - 1, in + r * context_);
    std::copy(window.begin() + 1, window.end(), out + r * context_);
  }
}

}  // namespace hlm
