// Fuzz target: a whole record read (read_record) from a header, a signal file and an
// annotation file cut out of one input. The input is the header text, a NUL, the signal bytes,
// a NUL, the annotation bytes; the header may name rec.dat (the seeds do), so every signal
// decoder, the size checks between header and file (a signal file shorter or longer than the
// header says), skew and checksums are reached.
#include <vector>

#include "fuzz/fuzz_input.h"
#include "hlm/wfdb.h"

namespace {

// The part of [data, data + size) before the next NUL from `at`, moving `at` past it.
std::pair<const uint8_t*, size_t> next_part(const uint8_t* data, size_t size, size_t& at) {
  const size_t start = std::min(at, size);
  size_t end = start;
  while (end < size && data[end] != 0) ++end;
  at = end + 1;
  return {data + start, end - start};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t at = 0;
  const auto header = next_part(data, size, at);
  const auto signals = next_part(data, size, at);
  const auto annotations =
      at < size ? std::make_pair(data + at, size - at) : std::make_pair(data, size_t(0));
  hlm::fuzz::write_input("rec.hea", header.first, header.second);
  hlm::fuzz::write_input("rec.dat", signals.first, signals.second);
  hlm::fuzz::write_input("rec.atr", annotations.first, annotations.second);
  hlm::fuzz::expect_only_hlm_errors([&] {
    hlm::wfdb::ReadOptions options;
    options.verify_checksums = false;  // a mismatch only logs; keep the fuzzer's output short
    hlm::wfdb::read_record(hlm::fuzz::scratch_dir().string(), "rec", options);
  });
  return 0;
}
