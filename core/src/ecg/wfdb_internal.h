// Private pieces of the WFDB reader shared by its sources: format tables, bulk sample decoding
// and a read-only memory map of a whole file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace hlm::wfdb {

// Any format the WFDB library defines (including FLAC 508/516/524, which are not decoded).
bool is_wfdb_format(int format);
// ADC resolution WFDB assumes when the header omits it.
int default_adc_resolution(int format);
// Samples per packed group: 2 for 212, 3 for 310/311, 1 otherwise. Decoding starts on a group.
int samples_per_group(int format);
// Bytes holding the first n samples of a sample stream (partial trailing groups as WFDB writes
// them), and the whole samples held by `bytes` bytes.
uint64_t bytes_for_samples(int format, uint64_t n);
uint64_t samples_in_bytes(int format, uint64_t bytes);
// The raw value WFDB reserves for "invalid sample"; `has` is false for formats without one.
int32_t invalid_raw_value(int format, bool* has);

// Decodes samples [first, first + n) of a stream that starts at `data` and holds `size` bytes.
// `first` must be a multiple of samples_per_group(format) and bytes_for_samples(first + n) <=
// size. Output is the raw value WFDB computes (sign-extended; offset removed for 80 and 160;
// the byte difference for format 8). Format 0 produces no data and must not be passed.
void decode_samples(int format, const uint8_t* data, uint64_t size, uint64_t first, size_t n,
                    int32_t* out);

// Format 212 holding two signals of one sample per frame (MIT-BIH's layout): each 3-byte group
// is one frame. Decodes `frames` frames from p straight into the two signals.
void decode_212_pairs(const uint8_t* p, size_t frames, int32_t* a, int32_t* b);

// A whole file mapped read-only (MAP_PRIVATE, MADV_SEQUENTIAL). Empty files map to size 0.
class MappedFile {
 public:
  MappedFile() = default;
  // Throws hlm::DataError naming the path when the file cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

bool file_exists(const std::string& path);

}  // namespace hlm::wfdb
