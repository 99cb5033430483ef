// The two-node SLURM cluster of tests/support/slurm_cluster.sh as a test fixture: started
// before each test and stopped after it, also when the test fails. Tests run commands "on"
// node A or B (in its network namespace) and wait for jobs through scontrol.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "slurm/sbatch_script.h"
#include "support/hlm_cli.h"

namespace hlm::test {

class SlurmCluster : public ::testing::Test {
 protected:
  std::filesystem::path dir;
  std::string name;
  bool up = false;

  // Why this machine cannot run the cluster, or "".
  static std::string missing() {
    if (::geteuid() != 0) return "needs root (network namespaces, slurmd)";
    for (const char* tool : {"ip", "nsenter", "slurmctld", "slurmd", "sbatch", "srun"})
      if (run_command(std::string("command -v ") + tool + " >/dev/null 2>&1").exit_code != 0)
        return std::string(tool) + " is not installed (bash tools/setup.sh deps)";
    return "";
  }

  static std::string script() { return HLM_SOURCE_DIR "/tests/support/slurm_cluster.sh"; }

  void SetUp() override {
    if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
    name = "c" + std::to_string(::getpid() % 1000000);
    dir = std::filesystem::temp_directory_path() / ("hlm_cluster_" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto started =
        run_command("bash " + script() + " up " + dir.string() + " " + name + " 2>&1");
    up = started.exit_code == 0;
    ASSERT_TRUE(up) << started.output;
  }

  void TearDown() override {
    if (dir.empty()) return;
    run_command("bash " + script() + " down " + dir.string() + " " + name + " 2>&1");
    if (!HasFailure())
      std::filesystem::remove_all(dir);  // kept, with the daemons' logs, on failure
  }

  // Runs a shell command on node 'A' or 'B' from the source root, with SLURM_CONF set.
  CommandResult on(char node, const std::string& command) const {
    return run_command("bash " + script() + " in " + dir.string() + " " + name + " " +
                       std::string(1, node) + " bash -c " +
                       hlm::shell_quote("cd " HLM_SOURCE_DIR " && " + command) + " 2>&1");
  }

  static std::string hlm() { return HLM_BINARY_DIR "/bin/hlm"; }

  // scontrol show job's fields (JobState, Restarts, NodeList...); empty when unknown.
  std::map<std::string, std::string> job(const std::string& id) const {
    std::map<std::string, std::string> fields;
    std::istringstream words(on('A', "scontrol show job -o " + id).output);
    for (std::string word; words >> word;)
      if (const size_t eq = word.find('='); eq != std::string::npos)
        fields[word.substr(0, eq)] = word.substr(eq + 1);
    return fields;
  }

  // Polls until the job ends (COMPLETED, FAILED, ...) or the time is up; returns its state.
  // A requeued job starts again about 11 s after (cred_expire=10 in slurm_cluster.sh): not
  // sooner, or slurmd refuses it ("Job credential revoked").
  std::string wait_for_end(const std::string& id, int seconds = 400) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::string state;
    while (std::chrono::steady_clock::now() < deadline) {
      const auto fields = job(id);
      state = fields.count("JobState") ? fields.at("JobState") : "UNKNOWN";
      if (state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT" ||
          state == "NODE_FAIL" || state == "OUT_OF_MEMORY")
        return state;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return "still " + state + " after " + std::to_string(seconds) + " s";
  }
};

// "submitted job 12; hlm status RUN_DIR" -> {12, RUN_DIR}
inline std::pair<std::string, std::filesystem::path> submitted(const std::string& output) {
  const std::string marker = "submitted job ";
  const size_t at = output.find(marker);
  if (at == std::string::npos) return {};
  const size_t id_end = output.find(';', at);
  const std::string id = output.substr(at + marker.size(), id_end - at - marker.size());
  const std::string status = "hlm status ";
  const size_t dir_at = output.find(status, id_end);
  const size_t dir_end = output.find('\n', dir_at);
  return {id, output.substr(dir_at + status.size(), dir_end - dir_at - status.size())};
}

}  // namespace hlm::test
