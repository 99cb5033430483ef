// Parts the classifiers share (see classifier_parts.h).
#include "tasks/classifier_parts.h"

#include "train/checkpoint.h"

namespace hlm {

at::Tensor backbone_hidden(Model& model, const HeadOptions& options, const at::Tensor& tokens) {
  if (options.backbone != "frozen") return model.hidden(tokens);
  // A linear probe: the backbone is a fixed feature extractor (no dropout, no gradients).
  torch::NoGradGuard no_grad;
  model.module().eval();
  return model.hidden(tokens);
}

TrainableParameters trainable_parameters(Model& model, const HeadOptions& options,
                                         torch::nn::Linear& head) {
  TrainableParameters params;
  if (options.backbone != "frozen") params.backbone = model.module().parameters();
  params.head = head->parameters();
  return params;
}

void bundle_classifier(torch::nn::Module& bundle, Model& model, torch::nn::Linear& head) {
  bundle.register_module("model",
                         std::shared_ptr<torch::nn::Module>(&model.module(), [](auto*) {}));
  bundle.register_module("head", head.ptr());
}

void save_classifier(Model& model, torch::nn::Linear& head, const std::string& path) {
  save_module(model.module(), path + ".model");
  save_module(*head, path + ".head");
}

void load_classifier(Model& model, torch::nn::Linear& head, const std::string& path) {
  load_module(model.module(), path + ".model");
  load_module(*head, path + ".head");
}

}  // namespace hlm
