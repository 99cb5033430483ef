// State-dict export and import in torch.save's format (see export.h).
#include "train/export.h"

#include <caffe2/serialize/inline_container.h>
#include <fcntl.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>
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

// torch::pickle_save, without the type tags it puts on a dict (a torch.jit global that
// torch.load refuses by default since PyTorch 2.6, weights_only=True): the archive then holds
// a plain dict of tensors, which torch.load reads as it is and pickle_load reads back alike.
std::vector<char> pickle_without_type_tags(const c10::IValue& value) {
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&](const char* bytes, size_t size) { pickle.insert(pickle.end(), bytes, bytes + size); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> archive;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
    const char* bytes = static_cast<const char*>(data);
    archive.insert(archive.end(), bytes, bytes + size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(),
                                     writer);
  writer.writeEndOfFile();
  return archive;
}

}  // namespace

void save_tensor_dict(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::string& path) {
  // c10::Dict keeps insertion order, and so does the Python dict torch.load rebuilds.
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, tensor] : tensors) dict.insert(name, tensor.detach().cpu());
  // Written and fsync'ed before the rename, so a crash leaves the old file or the whole new one.
  const std::vector<char> bytes = pickle_without_type_tags(c10::IValue(dict));
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
