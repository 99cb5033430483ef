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

HeadLayers::HeadLayers(int64_t inputs, int hidden_units, int64_t classes) {
  if (hidden_units > 0) {
    hidden = torch::nn::Linear(inputs, hidden_units);
    inputs = hidden_units;
  }
  out = torch::nn::Linear(inputs, classes);
}

at::Tensor HeadLayers::operator()(const at::Tensor& x) {
  return out(hidden ? torch::gelu(hidden(x)) : x);
}

std::vector<torch::Tensor> HeadLayers::parameters() const {
  std::vector<torch::Tensor> all = out->parameters();
  if (hidden)
    for (const auto& p : hidden->parameters()) all.push_back(p);
  return all;
}

void HeadLayers::to(const torch::Device& device) {
  out->to(device);
  if (hidden) hidden->to(device);
}

TrainableParameters trainable_parameters(Model& model, const HeadOptions& options,
                                         HeadLayers& head) {
  TrainableParameters params;
  if (options.backbone != "frozen") params.backbone = model.module().parameters();
  params.head = head.parameters();
  return params;
}

void bundle_classifier(torch::nn::Module& bundle, Model& model, HeadLayers& head) {
  bundle.register_module("model",
                         std::shared_ptr<torch::nn::Module>(&model.module(), [](auto*) {}));
  bundle.register_module("head", head.out.ptr());
  if (head.hidden) bundle.register_module("head_hidden", head.hidden.ptr());
}

void save_classifier(Model& model, HeadLayers& head, const std::string& path) {
  save_module(model.module(), path + ".model");
  save_module(*head.out, path + ".head");
  if (head.hidden) save_module(*head.hidden, path + ".head_hidden");
}

void load_classifier(Model& model, HeadLayers& head, const std::string& path) {
  load_module(model.module(), path + ".model");
  load_module(*head.out, path + ".head");
  if (head.hidden) load_module(*head.hidden, path + ".head_hidden");
}

}  // namespace hlm
