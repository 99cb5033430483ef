// Fuzz target: the WFDB header parser (read_header) on arbitrary .hea text.
#include "fuzz/fuzz_input.h"
#include "hlm/wfdb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hlm::fuzz::write_input("rec.hea", data, size);
  hlm::fuzz::expect_only_hlm_errors([&] { hlm::wfdb::read_header(path); });
  return 0;
}
