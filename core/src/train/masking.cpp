// RoBERTa-style token masking (see masking.h).
#include "train/masking.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include "hlm/tokenizer.h"

namespace hlm {

MaskedBatch mask_tokens(const at::Tensor& tokens, double probability, int64_t vocab_size,
                        at::Generator& generator) {
  TORCH_CHECK(probability > 0.0 && probability <= 1.0, "mask probability must be in (0, 1], got ",
              probability);
  TORCH_CHECK(vocab_size > int64_t(kFirstContentToken), "vocab_size ", vocab_size,
              " leaves no content tokens (they start at ", kFirstContentToken, ")");
  TORCH_CHECK(tokens.scalar_type() == at::kLong && tokens.device().is_cpu(),
              "mask_tokens expects int64 CPU tokens, got ", tokens.toString());
  const auto options = tokens.options().dtype(at::kFloat);
  // Three draws of the full shape in a fixed order keep the result a function of the
  // generator state alone.
  const at::Tensor choose = at::rand(tokens.sizes(), generator, options);
  const at::Tensor kind = at::rand(tokens.sizes(), generator, options);
  const at::Tensor random_tokens = at::randint(int64_t(kFirstContentToken), vocab_size,
                                               tokens.sizes(), generator, tokens.options());

  const at::Tensor content = tokens.ge(int64_t(kFirstContentToken));
  at::Tensor chosen = choose.lt(probability).logical_and_(content);
  if (!chosen.any().item<bool>() && content.any().item<bool>()) {
    // The content position with the smallest draw: still random, still seeded.
    const int64_t flat = choose.masked_fill(content.logical_not(), 2.0f).argmin().item<int64_t>();
    chosen.view(-1)[flat] = true;
  }
  const at::Tensor to_mask = chosen.logical_and(kind.lt(0.8));
  const at::Tensor to_random = chosen.logical_and(kind.ge(0.8)).logical_and_(kind.lt(0.9));

  MaskedBatch out;
  out.inputs = tokens.masked_fill(to_mask, int64_t(kMask));
  out.inputs = at::where(to_random, random_tokens, out.inputs);
  out.targets = tokens.masked_fill(chosen.logical_not(), kIgnoreTarget);
  return out;
}

MaskedBatch mask_tokens(const at::Tensor& tokens, double probability, int64_t vocab_size,
                        uint64_t seed) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return mask_tokens(tokens, probability, vocab_size, generator);
}

}  // namespace hlm
