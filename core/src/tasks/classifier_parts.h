// What the beat and segment classifiers share: the backbone's hidden states (fine-tuned or, as
// a linear probe, frozen), the parameters the optimizer updates, the bundle a checkpoint holds,
// the saved files.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "hlm/model.h"
#include "hlm/token_store.h"
#include "tasks/head_options.h"

namespace hlm {

// The backbone's hidden states; with backbone "frozen" in eval mode and without gradients.
at::Tensor backbone_hidden(Model& model, const HeadOptions& options, const at::Tensor& tokens);

// The head on the pooled inputs: one linear layer to the classes, or with
// HeadOptions::hidden_units > 0 a hidden layer (GELU) before it. The hidden layer lets inputs
// combine (a wide QRS matters at one heart rate, not at another), which one linear layer
// cannot.
class HeadLayers {
 public:
  HeadLayers() = default;
  HeadLayers(int64_t inputs, int hidden_units, int64_t classes);
  at::Tensor operator()(const at::Tensor& x);
  std::vector<torch::Tensor> parameters() const;
  void to(const torch::Device& device);
  torch::nn::Linear hidden{nullptr};  // absent without hidden units
  torch::nn::Linear out{nullptr};
};

// What the optimizer updates: the backbone's parameters unless it is frozen, and the head's.
struct TrainableParameters {
  std::vector<torch::Tensor> backbone, head;
};
TrainableParameters trainable_parameters(Model& model, const HeadOptions& options,
                                         HeadLayers& head);

// Registers model and head in `bundle`, so one checkpoint holds the whole classifier.
void bundle_classifier(torch::nn::Module& bundle, Model& model, HeadLayers& head);

// PATH.model, PATH.head and, with hidden units, PATH.head_hidden.
void save_classifier(Model& model, HeadLayers& head, const std::string& path);
void load_classifier(Model& model, HeadLayers& head, const std::string& path);

}  // namespace hlm
