// What the fine-tune and evaluate tests share: one run of tests/fixtures/finetune_cv.yaml (it
// takes seconds; every test binary runs it once), and small checks of its outputs.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/hlm_cli.h"

namespace hlm::test {

inline std::set<std::string> as_set(const nlohmann::json& list) {
  return list.get<std::set<std::string>>();
}

// A CSV line's comma-separated fields (the predictions CSV quotes nothing).
inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream row(line);
  for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
  return fields;
}

// A run that must stop before doing anything, with an error that says `message`.
inline void expect_refused(const CommandResult& run, const std::string& message) {
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(message), std::string::npos) << "wanted: " << message << "\n"
                                                         << run.output;
}

struct CrossValidationRun {
  std::filesystem::path run_dir;
  std::string output;
};

// The fixture's one run, shared by the tests of a binary.
inline const CrossValidationRun& cross_validation_run() {
  static ScratchDir runs("hlm_finetune_cv");
  static const CrossValidationRun run = [] {
    const auto r = run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return CrossValidationRun{run_dir_of(r.output), r.output};
  }();
  return run;
}

}  // namespace hlm::test
