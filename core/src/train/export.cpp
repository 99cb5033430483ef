// State-dict export and import through torch::pickle_save / pickle_load (see export.h).
#include "train/export.h"

#include <fcntl.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "hlm/errors.h"
#include "util/atomic_file.h"

namespace hlm {

namespace {

std::map<std::string, at::Tensor> named_tensors(torch::nn::Module& module) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : module.named_parameters()) out[p.key()] = p.value();
  for (const auto& b : module.named_buffers()) out[b.key()] = b.value();
  return out;
}

// Written and fsync'ed before the rename, so a crash leaves the old file or the whole new one.
}  // namespace

void save_tensor_dict(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::string& path) {
  // c10::Dict keeps insertion order, and so does the Python dict torch.load rebuilds.
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, tensor] : tensors) dict.insert(name, tensor.detach().cpu());
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  write_file_atomic(path, std::string_view(bytes.data(), bytes.size()));
}

void export_state_dict(torch::nn::Module& module, const std::string& path) {
  // Parameters first, then buffers, as Python's module.state_dict() lists them.
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& p : module.named_parameters()) tensors.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) tensors.emplace_back(b.key(), b.value());
  save_tensor_dict(tensors, path);
}

std::map<std::string, at::Tensor> import_state_dict(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw CheckpointError(
        "{}: weights file not found; export it with export_state_dict or "
        "torch.save(model.state_dict(), path)",
        path);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    throw CheckpointError("{}: not a torch.save file ({})", path, e.what());
  }
  if (!value.isGenericDict())
    throw CheckpointError("{}: holds a {}, not a dict of tensors; save a state_dict()", path,
                          value.tagKind());
  std::map<std::string, at::Tensor> out;
  for (const auto& item : value.toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor())
      throw CheckpointError("{}: entry of type {} -> {} is not a (name, tensor) pair", path,
                            item.key().tagKind(), item.value().tagKind());
    out[item.key().toStringRef()] = item.value().toTensor();
  }
  return out;
}

void load_state_dict(torch::nn::Module& module, const std::map<std::string, at::Tensor>& tensors,
                     const std::string& origin) {
  auto targets = named_tensors(module);
  for (const auto& [name, tensor] : tensors)
    if (!targets.count(name))
      throw CheckpointError(
          "{}: unexpected tensor '{}'; the weights are of another model or configuration", origin,
          name);
  torch::NoGradGuard no_grad;
  for (auto& [name, target] : targets) {
    auto it = tensors.find(name);
    if (it == tensors.end()) throw CheckpointError("{}: missing tensor '{}'", origin, name);
    if (it->second.sizes() != target.sizes())
      throw CheckpointError("{}: tensor '{}' has shape {} but the model expects {}", origin, name,
                            c10::str(it->second.sizes()), c10::str(target.sizes()));
    target.copy_(it->second);
  }
}

}  // namespace hlm
