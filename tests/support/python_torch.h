// Runs Debian's /usr/bin/python3 with python3-torch for parity tests against PyTorch; tests
// skip when it is absent (the `python3` first on PATH may be another interpreter).
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hlm::test {

inline constexpr const char* kPythonWithTorch = "/usr/bin/python3";

// Empty when /usr/bin/python3 can import torch; otherwise why not, for GTEST_SKIP.
inline std::string python_torch_missing() {
  if (!std::filesystem::exists(kPythonWithTorch))
    return std::string(kPythonWithTorch) + " not found";
  const std::string probe = std::string(kPythonWithTorch) + " -c 'import torch' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0)
    return std::string(kPythonWithTorch) + " cannot import torch (install python3-torch)";
  return "";
}

struct PythonResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `/usr/bin/python3 <args>` (args already quoted as needed), capturing its output in log.
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
