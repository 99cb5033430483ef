// Fuzz target: the workflow loader (YAML, schema checks, interpolation, the matrix) on
// arbitrary text, against the tests' small schema.
#include "fuzz/fuzz_input.h"
#include "support/workflow_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const hlm::workflow::Schema schema = hlm::workflow::test_support::test_schema();
  const std::string text(reinterpret_cast<const char*>(data), size);
  hlm::fuzz::expect_only_hlm_errors(
      [&] { hlm::workflow::load_workflow_text(text, "fuzz.yaml", {}, schema); });
  return 0;
}
