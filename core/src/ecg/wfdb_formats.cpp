// WFDB signal formats: the format table and the bulk decoders, one tight loop per format
// (no per-sample dispatch). Bit layouts follow WFDB's r212/r310/r311/... readers.
#include <cstring>

#include "ecg/wfdb_internal.h"
#include "hlm/wfdb.h"
#include "util/target_clones.h"

namespace hlm::wfdb {

bool is_wfdb_format(int format) {
  switch (format) {
    case 0:
    case 8:
    case 16:
    case 24:
    case 32:
    case 61:
    case 80:
    case 160:
    case 212:
    case 310:
    case 311:
    case 508:
    case 516:
    case 524:
      return true;
    default:
      return false;
  }
}

bool is_supported_format(int format) {
  return is_wfdb_format(format) && format != 508 && format != 516 && format != 524;
}

int default_adc_resolution(int format) {
  switch (format) {
    case 80:
      return 8;
    case 160:
      return 16;
    case 212:
      return 12;
    case 310:
    case 311:
      return 10;
    default:
      return 12;  // WFDB_DEFRES
  }
}

int samples_per_group(int format) {
  if (format == 212) return 2;
  if (format == 310 || format == 311) return 3;
  return 1;
}

static uint64_t bytes_per_sample(int format) {
  switch (format) {
    case 8:
    case 80:
      return 1;
    case 16:
    case 61:
    case 160:
      return 2;
    case 24:
      return 3;
    case 32:
      return 4;
    default:
      return 0;
  }
}

uint64_t bytes_for_samples(int format, uint64_t n) {
  switch (format) {
    case 0:
      return 0;
    case 212:
      return n / 2 * 3 + (n % 2 ? 2 : 0);  // a lone last sample takes two bytes
    case 310: {
      static const uint64_t tail[] = {0, 2, 4};
      return n / 3 * 4 + tail[n % 3];
    }
    case 311: {
      static const uint64_t tail[] = {0, 2, 3};
      return n / 3 * 4 + tail[n % 3];
    }
    default:
      return n * bytes_per_sample(format);
  }
}

uint64_t samples_in_bytes(int format, uint64_t bytes) {
  switch (format) {
    case 0:
      return 0;
    case 212:
      return bytes / 3 * 2 + (bytes % 3 == 2 ? 1 : 0);
    case 310:
      return bytes / 4 * 3 + (bytes % 4 >= 2 ? 1 : 0);
    case 311: {
      static const uint64_t tail[] = {0, 0, 1, 2};
      return bytes / 4 * 3 + tail[bytes % 4];
    }
    default:
      return bytes_per_sample(format) ? bytes / bytes_per_sample(format) : 0;
  }
}

int32_t invalid_raw_value(int format, bool* has) {
  *has = true;
  switch (format) {
    case 16:
    case 61:
    case 160:
      return -32768;
    case 24:
      return -(1 << 23);
    case 32:
      return INT32_MIN;
    case 80:
      return -128;
    case 212:
      return -2048;
    case 310:
    case 311:
      return -512;
    default:
      *has = false;
      return 0;
  }
}

namespace {

inline int32_t sign_extend(uint32_t v, int bits) {
  const uint32_t m = 1u << (bits - 1);
  return static_cast<int32_t>((v ^ m) - m);
}

// Format 212's group of 3 bytes: two 12-bit samples, the middle byte holding the high nibble
// of each (the low nibble the first's).
inline int32_t first_of_212(const uint8_t* p) {
  return sign_extend(p[0] | ((p[1] & 0x0Fu) << 8), 12);
}
inline int32_t second_of_212(const uint8_t* p) {
  return sign_extend(p[2] | ((p[1] & 0xF0u) << 4), 12);
}

// Decodes `groups` whole groups from p.
void decode_groups(int format, const uint8_t* p, size_t groups, int32_t* out) {
  switch (format) {
    case 8:
      for (size_t i = 0; i < groups; ++i) out[i] = static_cast<int8_t>(p[i]);
      break;
    case 80:
      for (size_t i = 0; i < groups; ++i) out[i] = static_cast<int32_t>(p[i]) - 128;
      break;
    case 16:
      for (size_t i = 0; i < groups; ++i, p += 2)
        out[i] = static_cast<int16_t>(static_cast<uint16_t>(p[0] | (p[1] << 8)));
      break;
    case 61:
      for (size_t i = 0; i < groups; ++i, p += 2)
        out[i] = static_cast<int16_t>(static_cast<uint16_t>(p[1] | (p[0] << 8)));
      break;
    case 160:
      for (size_t i = 0; i < groups; ++i, p += 2)
        out[i] = static_cast<int32_t>(p[0] | (p[1] << 8)) - 32768;
      break;
    case 24:
      for (size_t i = 0; i < groups; ++i, p += 3)
        out[i] = sign_extend(p[0] | (p[1] << 8) | (static_cast<uint32_t>(p[2]) << 16), 24);
      break;
    case 32:
      for (size_t i = 0; i < groups; ++i, p += 4) {
        uint32_t w;
        std::memcpy(&w, p, 4);  // little-endian hosts only, as the rest of hlm
        out[i] = static_cast<int32_t>(w);
      }
      break;
    case 212:
      for (size_t i = 0; i < groups; ++i, p += 3, out += 2) {
        out[0] = first_of_212(p);
        out[1] = second_of_212(p);
      }
      break;
    case 310:
      for (size_t i = 0; i < groups; ++i, p += 4, out += 3) {
        const uint32_t w0 = p[0] | (p[1] << 8), w1 = p[2] | (p[3] << 8);
        out[0] = sign_extend((w0 >> 1) & 0x3FFu, 10);
        out[1] = sign_extend((w1 >> 1) & 0x3FFu, 10);
        out[2] = sign_extend((w0 >> 11) | ((w1 >> 11) << 5), 10);
      }
      break;
    case 311:
      for (size_t i = 0; i < groups; ++i, p += 4, out += 3) {
        const uint32_t w = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
        out[0] = sign_extend(w & 0x3FFu, 10);
        out[1] = sign_extend((w >> 10) & 0x3FFu, 10);
        out[2] = sign_extend((w >> 20) & 0x3FFu, 10);
      }
      break;
    default:
      break;
  }
}

}  // namespace

HLM_VECTOR_CLONES
void decode_212_pairs(const uint8_t* __restrict p, size_t frames, int32_t* __restrict a,
                      int32_t* __restrict b) {
  for (size_t i = 0; i < frames; ++i) {
    a[i] = first_of_212(p + 3 * i);
    b[i] = second_of_212(p + 3 * i);
  }
}

void decode_samples(int format, const uint8_t* data, uint64_t size, uint64_t first, size_t n,
                    int32_t* out) {
  const int per_group = samples_per_group(format);
  const uint8_t* p = data + bytes_for_samples(format, first);
  const size_t whole = n / per_group;
  decode_groups(format, p, whole, out);
  const size_t rest = n - whole * per_group;
  if (rest == 0) return;
  // A partial last group: copy its bytes into a zeroed group so the loop never reads past
  // the end of the mapping.
  const uint64_t done = first + whole * per_group;
  const uint64_t at = bytes_for_samples(format, done);
  const uint64_t have = size > at ? size - at : 0;
  uint8_t group[8] = {0};
  std::memcpy(group, data + at, have < sizeof(group) ? have : sizeof(group));
  int32_t tail[3] = {0, 0, 0};
  decode_groups(format, group, 1, tail);
  for (size_t i = 0; i < rest; ++i) out[whole * per_group + i] = tail[i];
}

}  // namespace hlm::wfdb
