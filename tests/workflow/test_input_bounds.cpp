// Inputs checked before work and bounded: numbers out of their declared range, files that are
// no workflow, YAML that expands without bound, sweeps too large, flags out of range; and stop
// signals that end a command promptly. Each case here validated (or hung, or was killed by
// the kernel) before these checks.
#include <gtest/gtest.h>

#include <fstream>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::CommandResult;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

CommandResult validate(const std::string& args) { return run_hlm("validate " + args); }

}  // namespace

TEST(InputBounds, NumbersOutOfTheirRangeAreRefusedAtValidateNamingTheRange) {
  const std::string quickstart = "workflows/quickstart.yaml ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pretrain.batch=0",
       "'batch' in params of stage 'pretrain' is 0, out of its range: "
       "allowed 1 or more"},
      {"pretrain.batch=-4", "allowed 1 or more"},
      {"pretrain.lr=-1",
       "'lr' in params of stage 'pretrain' is -1, out of its range: allowed "
       "more than 0"},
      {"pretrain.steps=-5", "allowed 1 or more"},
      {"finetune.steps=-1", "allowed 1 or more"},
      {"finetune.holdout_tail=-0.5", "allowed 0 up to (not including) 1"},
      {"pretrain.log_every=0", "allowed 1 or more"},
      {"'pretrain.model={plugin: gpt, context: 0}'", "'context'"},
      {"'pretrain.model={plugin: gpt, d_model: 0}'", "'d_model'"},
      {"'pretrain.model={plugin: gpt, d_model: 64, n_head: 3}'",
       "d_model 64 is not divisible by n_head 3"},
  };
  for (const auto& [override_text, message] : cases) {
    const auto r = validate(quickstart + override_text);
    EXPECT_EQ(r.exit_code, 2) << override_text << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << override_text << "\n" << r.output;
  }
}

TEST(InputBounds, ARangeErrorInAFileNamesItsLineAndASlowSamplingRateIsRefused) {
  ScratchDir dir("hlm_bounds_file");
  const fs::path wf = dir.path / "wf.yaml";
  std::ofstream(wf) << "name: bounds\nstages:\n  - id: tokenize\n    kind: tokenize\n"
                       "    params:\n      datasets: [{plugin: synthetic, sampling_hz: 1}]\n"
                       "      tokenizer: {plugin: beat-vq}\n";
  const auto r = validate(wf.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, wf.string() + ":6:")) << r.output;
  EXPECT_TRUE(contains(r.output, "'sampling_hz'")) << r.output;
  EXPECT_TRUE(contains(r.output, "allowed 50 to 10000")) << r.output;
}

TEST(InputBounds, AFolderADeviceAndAPipeAreNoWorkflowFiles) {
  ScratchDir dir("hlm_bounds_files");
  const auto folder = validate(dir.path.string());
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_TRUE(contains(folder.output, "a folder, not a workflow file")) << folder.output;
  // Before: read /dev/zero until the kernel's OOM killer ended it.
  const auto zero = validate("/dev/zero");
  EXPECT_EQ(zero.exit_code, 2) << zero.output;
  EXPECT_TRUE(contains(zero.output, "/dev/zero: not a regular file")) << zero.output;
}

TEST(InputBounds, NestedAliasesStopAtTheValueLimitNamingTheFile) {
  ScratchDir dir("hlm_bounds_alias");
  // Ten levels of ten aliases each: 10^10 values once expanded, from 11 lines.
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) yaml += ", " + prev;
    yaml += "]\n";
  }
  const fs::path wf = dir.path / "bomb.yaml";
  std::ofstream(wf) << "name: bomb\nvars:\n  " << [&] {
    std::string indented;
    for (char c : yaml) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
    return indented;
  }() << "\nstages: [{id: a, kind: tokenize}]\n";
  const auto r = validate(wf.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, wf.string())) << r.output;
  EXPECT_TRUE(contains(r.output, "expands to more than 1000000 values")) << r.output;
}

TEST(InputBounds, MergeKeysAreNamedAndASweepTooLargeIsRefused) {
  ScratchDir dir("hlm_bounds_merge");
  const fs::path merge = dir.path / "merge.yaml";
  std::ofstream(merge) << "name: merge\nvars:\n  base: &base {lr: 0.001}\nstages:\n"
                          "  - id: pretrain\n    kind: pretrain\n    params:\n      <<: *base\n";
  const auto merged = validate(merge.string());
  EXPECT_EQ(merged.exit_code, 2) << merged.output;
  EXPECT_TRUE(contains(merged.output, "YAML merge keys (<<: *name) are not supported"))
      << merged.output;
  EXPECT_FALSE(contains(merged.output, "did you mean")) << merged.output;

  std::string values = "[";
  for (int i = 1; i <= 30; ++i) values += (i > 1 ? ", " : "") + std::to_string(i);
  values += "]";
  const fs::path sweep = dir.path / "sweep.yaml";
  std::ofstream(sweep) << "name: sweep\nstages:\n  - id: tokenize\n    kind: tokenize\n"
                          "    params:\n      datasets: [{plugin: synthetic}]\n"
                          "      tokenizer: {plugin: beat-vq}\n    matrix:\n      threads: "
                       << values << "\n      fit_sample_cap: " << values
                       << "\n      tokenizer.codes: " << values << "\n";
  const auto swept = validate(sweep.string());
  EXPECT_EQ(swept.exit_code, 2) << swept.output;
  EXPECT_TRUE(contains(swept.output, "makes more than 10000 instances")) << swept.output;
}

// Validation is linear in the number of vars: 100000 of them, each naming the one before,
// validate (the scan per lookup made this take minutes).
TEST(InputBounds, AHundredThousandChainedVarsValidate) {
  ScratchDir dir("hlm_bounds_vars");
  const fs::path wf = dir.path / "vars.yaml";
  std::ofstream out(wf);
  out << "name: vars\nvars:\n  v0: 1\n";
  for (int i = 1; i < 100000; ++i) out << "  v" << i << ": ${vars.v" << i - 1 << "}\n";
  out << "stages:\n  - id: tokenize\n    kind: tokenize\n    params:\n"
         "      datasets: [{plugin: synthetic, records: '${vars.v99999}'}]\n"
         "      tokenizer: {plugin: beat-vq}\n";
  out.close();
  const auto r = validate(wf.string());
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(0, 2000);
}

TEST(InputBounds, FlagsOutOfRangeAndUnknownFlagsAreUsageErrors) {
  ScratchDir dir("hlm_bounds_flags");
  const fs::path file = dir.path / "a_file";
  std::ofstream(file) << "x";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run workflows/quickstart.yaml --nproc 0", "--nproc"},
      {"run workflows/quickstart.yaml --nproc -1", "--nproc"},
      {"run workflows/quickstart.yaml --metrics-port -1", "--metrics-port"},
      {"run workflows/quickstart.yaml --metrics-port 70000", "--metrics-port"},
      {"--plugin-path /nonexistent/plugins plugins", "/nonexistent/plugins"},
      {"run workflows/quickstart.yaml --no-such-flag", "--no-such-flag"},
      {"run workflows/quickstart.yaml --runs-dir " + file.string(),
       file.string() + " is a file; --runs-dir takes the folder"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_hlm(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  }
}

// A command with nothing to save ends at once on SIGTERM with 143 (before: it ran on until
// done). qrs-eval over 300 records (one MIT-BIH record's signals under 300 names) runs long
// enough to be signalled.
TEST(InputBounds, SigtermEndsACommandWithNothingToSaveAtOnce) {
  const fs::path mitdb = fs::path(HLM_SOURCE_DIR) / "workflows/data/mitdb";
  ScratchDir dir("hlm_bounds_sigterm");
  fs::copy_file(mitdb / "208.dat", dir.path / "208.dat");
  const std::string header = hlm::test::read_text(mitdb / "208.hea");
  for (int i = 0; i < 300; ++i) {
    const std::string name = "r" + std::to_string(1000 + i);
    std::ofstream(dir.path / (name + ".hea")) << name << header.substr(header.find(' '));
    fs::copy_file(mitdb / "208.atr", dir.path / (name + ".atr"));
  }
  const auto r = hlm::test::run_command(
      "'" HLM_BINARY_DIR "/bin/hlm' qrs-eval --threads 1 '" + dir.path.string() +
      "' >/dev/null 2>&1 & pid=$!; sleep 2; kill -TERM $pid; wait $pid; echo exit=$?");
  EXPECT_TRUE(contains(r.output, "exit=143")) << r.output;
}
