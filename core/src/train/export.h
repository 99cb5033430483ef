// Weights exchange with PyTorch in Python: a state dict (Dict[str, Tensor]) in the zip format
// torch.save writes, so `torch.load(path)` in Python gives the module's tensors by name.
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hlm {

// Writes every parameter and buffer of module under its dotted name ("blocks.0.qkv.weight"),
// detached, on the CPU, in registration order. The file appears complete or not at all (temp
// file + rename). Throws CheckpointError when it cannot be written.
void export_state_dict(torch::nn::Module& module, const std::string& path);

// Writes named tensors as a Dict[str, Tensor] in the given order (also for test inputs and
// other artifacts Python reads), atomically like export_state_dict.
void save_tensor_dict(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::string& path);

// Reads a Dict[str, Tensor] written by export_state_dict or by torch.save in Python. Throws
// CheckpointError for a missing file or one that holds anything else.
std::map<std::string, at::Tensor> import_state_dict(const std::string& path);

// Copies tensors into module's parameters and buffers by name. Every name of the module must be
// present with the same shape; extra names are errors too, so a mismatch never loads silently.
void load_state_dict(torch::nn::Module& module, const std::map<std::string, at::Tensor>& tensors,
                     const std::string& origin);

}  // namespace hlm
