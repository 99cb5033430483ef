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

// What the optimizer updates: the backbone's parameters unless it is frozen, and the head's.
struct TrainableParameters {
  std::vector<torch::Tensor> backbone, head;
};
TrainableParameters trainable_parameters(Model& model, const HeadOptions& options,
                                         torch::nn::Linear& head);

// Registers model and head in `bundle`, so one checkpoint holds the whole classifier.
void bundle_classifier(torch::nn::Module& bundle, Model& model, torch::nn::Linear& head);

// PATH.model and PATH.head.
void save_classifier(Model& model, torch::nn::Linear& head, const std::string& path);
void load_classifier(Model& model, torch::nn::Linear& head, const std::string& path);

}  // namespace hlm
