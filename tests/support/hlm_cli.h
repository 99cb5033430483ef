// Runs the built hlm binary from the source root (where workflows/ resolves) for integration
// tests, capturing its output and exit code.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace hlm::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command, capturing stdout and stderr (add 2>&1 to the command for stderr).
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline CommandResult run_hlm(const std::string& args) {
  return run_command("cd '" HLM_SOURCE_DIR "' && '" HLM_BINARY_DIR "/bin/hlm' " + args + " 2>&1");
}

// A fresh folder under the system temp dir, removed at scope exit.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
};

// The run directory named on the "run directory" line of hlm's output, or "".
inline std::filesystem::path run_dir_of(const std::string& output) {
  const std::string marker = "run directory ";
  const size_t at = output.find(marker);
  if (at == std::string::npos) return {};
  return output.substr(at + marker.size(), output.find('\n', at) - at - marker.size());
}

// The last line of output that ends with report.md: the run's report path.
inline std::string report_path(const std::string& output) {
  const size_t end = output.rfind("report.md");
  if (end == std::string::npos) return "";
  const size_t start = output.rfind('\n', end);
  return output.substr(start == std::string::npos ? 0 : start + 1,
                       end + 9 - (start == std::string::npos ? 0 : start + 1));
}

}  // namespace hlm::test

#include <signal.h>
#include <unistd.h>

#include <functional>

namespace hlm::test {

// Starts hlm in the background and calls on_line for each output line until it exits;
// on_line gets the child's pid so it can signal it. Returns the exit code (128 + signal).
inline CommandResult run_hlm_watching(
    const std::string& args, const std::function<void(pid_t, const std::string&)>& on_line) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    if (chdir(HLM_SOURCE_DIR) != 0) _exit(127);
    execl("/bin/sh", "sh", "-c", ("exec '" HLM_BINARY_DIR "/bin/hlm' " + args).c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  CommandResult result;
  std::string partial;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
    partial.append(buf, size_t(n));
    for (size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
      const std::string line = partial.substr(0, nl);
      partial.erase(0, nl + 1);
      result.output += line + "\n";
      on_line(pid, line);
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Whether a temp file of an atomic write of `path` (path.tmp.<pid>.<n>) was left behind.
inline bool temp_file_left(const std::string& path) {
  const std::filesystem::path p(path);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(p.parent_path(), ec))
    if (entry.path().filename().string().rfind(p.filename().string() + ".tmp", 0) == 0) return true;
  return false;
}

// A whole file as text; "" when it cannot be read.
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A stage's manifest.json in a run directory (status, params, results, artifacts).
inline nlohmann::json stage_manifest(const std::filesystem::path& run_dir,
                                     const std::string& stage) {
  return nlohmann::json::parse(read_text(run_dir / stage / "manifest.json"));
}

// What rank 0 of a training stage's ranks wrote when they finished.
inline nlohmann::json rank0_result(const std::filesystem::path& stage_dir) {
  return nlohmann::json::parse(read_text(stage_dir / "result_rank0.json"));
}

}  // namespace hlm::test
