// Fuzz target: the token store reader on arbitrary bytes, with the payload checksum both
// verified and not (a store opened without verification must still never read out of bounds),
// then every record's beats read back.
#include <vector>

#include "fuzz/fuzz_input.h"
#include "hlm/token_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hlm::fuzz::write_input("tokens.hlmt", data, size);
  for (const bool verify : {false, true})
    hlm::fuzz::expect_only_hlm_errors([&] {
      const hlm::TokenStore store = hlm::TokenStore::open(path, verify);
      std::vector<int64_t> window;
      for (size_t r = 0; r < store.record_count(); ++r) {
        const auto record = store.record(r);
        window.resize(size_t(std::min<uint64_t>(record.length, 64)));
        store.copy_window(record.offset, window.size(), window.data());
      }
    });
  return 0;
}
