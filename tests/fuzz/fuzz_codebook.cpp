// Fuzz target: the codebook reader (load_codebook) on arbitrary bytes.
#include "fuzz/fuzz_input.h"
#include "hlm/dsp/kmeans.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hlm::fuzz::write_input("codebook.bin", data, size);
  hlm::fuzz::expect_only_hlm_errors([&] {
    std::string metadata;
    hlm::dsp::load_codebook(path, &metadata);
  });
  return 0;
}
