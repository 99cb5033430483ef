// Fuzz target: a checkpoint's meta.json and DONE marker as a resume reads them: the DONE
// checksums checked against the step folder's files, then meta.json parsed. The input is the
// DONE text, a NUL, then meta.json.
#include "fuzz/fuzz_input.h"
#include "train/checkpoint_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t split = 0;
  while (split < size && data[split] != 0) ++split;
  const std::filesystem::path step = hlm::fuzz::scratch_dir() / "step_1";
  std::filesystem::create_directories(step);
  hlm::fuzz::write_input("step_1/DONE", data, split);
  const size_t meta_start = std::min(size, split + 1);
  hlm::fuzz::write_input("step_1/meta.json", data + meta_start, size - meta_start);
  hlm::fuzz::expect_only_hlm_errors([&] {
    hlm::verify_checkpoint_checksums(step.string(), {"meta.json"});
    hlm::read_checkpoint_meta(step.string());
  });
  return 0;
}
