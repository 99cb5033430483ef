// Fuzz target: command-line overrides ("stage.key=value", one per input line) applied to a
// valid workflow.
#include <sstream>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "support/workflow_schema.h"

namespace {

const char* const kWorkflow = R"(name: fuzz
vars:
  steps: 10
stages:
  - id: tokenize
    kind: tokenize
    params:
      dataset: {plugin: wfdb, dir: data, records: [a, b]}
      tokenizer: {plugin: beat-vq, codes: 16}
  - id: pretrain
    kind: pretrain
    needs: [tokenize]
    matrix:
      lr: [0.001, 0.01]
    params:
      model: {plugin: gpt, layers: 2}
      window: ${vars.steps}
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const hlm::workflow::Schema schema = hlm::workflow::test_support::test_schema();
  std::vector<std::string> overrides;
  std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string line; std::getline(lines, line);) overrides.push_back(line);
  hlm::fuzz::expect_only_hlm_errors(
      [&] { hlm::workflow::load_workflow_text(kWorkflow, "fuzz.yaml", overrides, schema); });
  return 0;
}
