// Runs the Python whose torch hlm was built against (HLM_PYTHON: the project's .venv by default,
// see cmake/HlmTorch.cmake) for parity tests against PyTorch, so both sides use one torch; tests
// skip when it is absent.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hlm::test {

inline constexpr const char* kPythonWithTorch = HLM_PYTHON;
// torchrun of that same environment, beside its interpreter.
inline std::string torchrun_path() {
  return (std::filesystem::path(kPythonWithTorch).parent_path() / "torchrun").string();
}

// Empty when kPythonWithTorch can import torch; otherwise why not, for GTEST_SKIP.
inline std::string python_torch_missing() {
  if (!std::filesystem::exists(kPythonWithTorch))
    return std::string(kPythonWithTorch) + " not found";
  const std::string probe = std::string(kPythonWithTorch) + " -c 'import torch' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0)
    return std::string(kPythonWithTorch) + " cannot import torch (run tools/python-env.sh)";
  return "";
}

struct PythonResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `kPythonWithTorch <args>` (args already quoted as needed), capturing its output in log.
inline PythonResult run_python(const std::string& args, const std::filesystem::path& log) {
  const std::string command =
      std::string(kPythonWithTorch) + " " + args + " >'" + log.string() + "' 2>&1";
  PythonResult result;
  const int status = std::system(command.c_str());
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  result.output = text.str();
  return result;
}

}  // namespace hlm::test
