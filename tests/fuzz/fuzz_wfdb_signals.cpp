// Fuzz target: every signal decoder of a supported WFDB format on arbitrary bytes, through the
// contract read_record relies on: decode what samples_in_bytes says the bytes hold, from a
// first sample at a group boundary. The first input byte picks the format and the first sample.
#include <vector>

#include "ecg/wfdb_internal.h"
#include "hlm/wfdb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  std::vector<int> formats;
  for (int f = 1; f < 1024; ++f)
    if (hlm::wfdb::is_supported_format(f)) formats.push_back(f);
  const int format = formats[data[0] % formats.size()];
  const uint8_t* bytes = data + 2;
  const uint64_t byte_count = size - 2;
  const uint64_t available = hlm::wfdb::samples_in_bytes(format, byte_count);
  const uint64_t group = uint64_t(hlm::wfdb::samples_per_group(format));
  const uint64_t first = available == 0 ? 0 : (data[1] % available) / group * group;
  const size_t n = size_t(available - first);
  std::vector<int32_t> out(n);
  if (n > 0) hlm::wfdb::decode_samples(format, bytes, byte_count, first, n, out.data());
  return 0;
}
