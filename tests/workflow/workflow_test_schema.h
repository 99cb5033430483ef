// A small schema (stage kinds and plugins shaped like hlm's own) and helpers shared by the
// workflow tests.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlm/errors.h"
#include "support/workflow_schema.h"
#include "workflow/workflow.h"

// gmock is not linked: a substring check that prints the whole text when it fails.
#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

namespace hlm::workflow::test_support {

inline Workflow load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return load_workflow_text(text, "wf.yaml", overrides, test_schema());
}

// The ConfigError message loading text gives, or "no error".
inline std::string error_of(const std::string& text,
                            const std::vector<std::string>& overrides = {}) {
  try {
    load(text, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// A valid two-stage workflow the tests vary.
inline const char* const kBasic = R"(name: basic
stages:
  - id: tokenize
    kind: tokenize
    params:
      dataset: {plugin: wfdb, dir: /data/mitdb}
      tokenizer: {plugin: beat-vq}
  - id: pretrain
    kind: pretrain
    needs: [tokenize]
    params:
      window: 128
)";

inline const StageInstance& stage(const Workflow& workflow, const std::string& id) {
  for (const auto& s : workflow.stages)
    if (s.id == id) return s;
  throw std::runtime_error("no stage instance " + id);
}

inline std::vector<std::string> ids_of(const Workflow& workflow) {
  std::vector<std::string> out;
  for (const auto& s : workflow.stages) out.push_back(s.id);
  return out;
}

}  // namespace hlm::workflow::test_support
