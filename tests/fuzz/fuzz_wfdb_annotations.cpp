// Fuzz target: the MIT annotation reader (read_annotations) on arbitrary bytes.
#include "fuzz/fuzz_input.h"
#include "hlm/wfdb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hlm::fuzz::write_input("rec.atr", data, size);
  hlm::fuzz::expect_only_hlm_errors([&] { hlm::wfdb::read_annotations(path); });
  return 0;
}
