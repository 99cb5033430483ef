// Weights export: a state dict that Python's torch.load reads as a dict of tensors, and that
// comes back (from C++ or from Python's torch.save) with the same names and values.
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "hlm/errors.h"
#include "support/hlm_cli.h"
#include "support/python_torch.h"
#include "train/export.h"

namespace fs = std::filesystem;

namespace {

// Nested names, a parameter without gradient and a buffer: what a state dict must carry.
struct SmallNetImpl : torch::nn::Module {
  SmallNetImpl() {
    torch::manual_seed(3);
    layers = register_module(
        "layers", torch::nn::ModuleList(torch::nn::Linear(4, 3), torch::nn::Linear(3, 2)));
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({2})));
    steps = register_buffer("steps", torch::arange(5, torch::kLong));
  }
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm norm{nullptr};
  at::Tensor steps;
};
TORCH_MODULE(SmallNet);

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const hlm::CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(Export, WritesEveryParameterAndBufferUnderItsDottedNameAndReadsThemBack) {
  hlm::test::ScratchDir dir("hlm_export_roundtrip");
  SmallNet net;
  const std::string path = (dir.path / "weights.pt").string();
  hlm::export_state_dict(*net, path);
  EXPECT_FALSE(hlm::test::temp_file_left(path));
  const auto tensors = hlm::import_state_dict(path);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : tensors) names.push_back(name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"layers.0.bias", "layers.0.weight", "layers.1.bias",
                                      "layers.1.weight", "norm.bias", "norm.weight", "steps"}));
  for (const auto& p : net->named_parameters())
    EXPECT_TRUE(torch::equal(tensors.at(p.key()), p.value())) << p.key();
  EXPECT_TRUE(torch::equal(tensors.at("steps"), net->steps));
  EXPECT_EQ(tensors.at("steps").scalar_type(), torch::kLong);
}

TEST(Export, ReplacesAnExistingFileWhole) {
  hlm::test::ScratchDir dir("hlm_export_replace");
  const std::string path = (dir.path / "weights.pt").string();
  SmallNet first, second;
  {
    torch::NoGradGuard no_grad;
    for (auto& p : second->parameters()) p.add_(1.0);
  }
  hlm::export_state_dict(*first, path);
  hlm::export_state_dict(*second, path);
  EXPECT_TRUE(torch::equal(hlm::import_state_dict(path).at("norm.weight"), second->norm->weight));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

TEST(Export, LoadsAStateDictIntoAModuleAndRefusesAMismatchNamingTheTensor) {
  SmallNet source, target;
  {
    torch::NoGradGuard no_grad;
    for (auto& p : source->parameters()) p.mul_(2.0);
  }
  std::map<std::string, at::Tensor> tensors;
  for (const auto& p : source->named_parameters()) tensors[p.key()] = p.value();
  for (const auto& b : source->named_buffers()) tensors[b.key()] = b.value();
  hlm::load_state_dict(*target, tensors, "test");
  EXPECT_TRUE(torch::equal(target->layers->ptr<torch::nn::LinearImpl>(1)->weight,
                           source->layers->ptr<torch::nn::LinearImpl>(1)->weight));
  tensors["norm.weight"] = torch::ones({3});
  EXPECT_NE(error_of([&] {
              hlm::load_state_dict(*target, tensors, "w.pt");
            }).find("w.pt: tensor 'norm.weight' has shape [3] but the model expects [2]"),
            std::string::npos);
  tensors.erase("norm.weight");
  EXPECT_NE(error_of([&] {
              hlm::load_state_dict(*target, tensors, "w.pt");
            }).find("missing tensor 'norm.weight'"),
            std::string::npos);
}

TEST(Export, RefusesToImportAMissingFileOrOneThatIsNotADictOfTensors) {
  hlm::test::ScratchDir dir("hlm_export_refuse");
  EXPECT_NE(
      error_of([&] { hlm::import_state_dict((dir.path / "none.pt").string()); }).find("not found"),
      std::string::npos);
  const std::string dict_path = (dir.path / "dict.pt").string();
  hlm::save_tensor_dict({{"a", torch::ones({2})}}, dict_path);
  EXPECT_TRUE(error_of([&] { hlm::import_state_dict(dict_path); }).empty());
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(torch::ones({2})));
  std::ofstream(dir.path / "tensor.pt", std::ios::binary)
      .write(bytes.data(), std::streamsize(bytes.size()));
  EXPECT_NE(error_of([&] {
              hlm::import_state_dict((dir.path / "tensor.pt").string());
            }).find("not a dict of tensors"),
            std::string::npos);
}

// Python reads hlm's file with torch.load, checks it is a dict of tensors, and writes each tensor
// doubled with torch.save, which hlm must read back.
TEST(Export, WritesAFileThatPyTorchInPythonLoadsAsADictOfTensors) {
  if (const std::string why = hlm::test::python_torch_missing(); !why.empty()) GTEST_SKIP() << why;
  hlm::test::ScratchDir dir("hlm_export_python");
  SmallNet net;
  const fs::path in = dir.path / "weights.pt", out = dir.path / "doubled.pt";
  hlm::export_state_dict(*net, in.string());
  const std::string script =
      "import sys, torch\n"
      "d = torch.load(sys.argv[1])\n"
      "assert type(d) is dict, type(d)\n"
      "assert all(isinstance(v, torch.Tensor) for v in d.values())\n"
      "assert list(d)[-1] == 'steps' and d['steps'].dtype == torch.int64\n"
      "torch.save({k: v * 2 for k, v in d.items()}, sys.argv[2])\n";
  const auto result =
      hlm::test::run_python("-c \"" + script + "\" '" + in.string() + "' '" + out.string() + "'",
                            dir.path / "python.log");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto doubled = hlm::import_state_dict(out.string());
  ASSERT_EQ(doubled.size(), 7u);
  for (const auto& p : net->named_parameters())
    EXPECT_TRUE(torch::equal(doubled.at(p.key()), p.value() * 2)) << p.key();
  EXPECT_TRUE(torch::equal(doubled.at("steps"), net->steps * 2));
}

}  // namespace
