// MIT-format annotation files: 16-bit words (6-bit code, 10-bit interval) with SKIP, NUM, SUB,
// CHN and AUX pseudo-annotations, decoded as WFDB's getann does; plus rdann's mnemonics.
#include <array>
#include <cstdio>
#include <cstring>

#include "ecg/wfdb_internal.h"
#include "hlm/errors.h"
#include "hlm/wfdb.h"

namespace hlm::wfdb {
namespace {

constexpr int kSkip = 59, kNum = 60, kSub = 61, kChn = 62, kAux = 63;
constexpr int kLastCode = 49;  // WFDB's ACMAX

[[noreturn]] void corrupt(const std::string& path, size_t at, const std::string& problem) {
  throw DataError("{}: byte {}: {} (the annotation file is truncated or corrupt; fetch it again)",
                  path, at, problem);
}

}  // namespace

std::vector<Annotation> read_annotations(const std::string& path) {
  const MappedFile file(path);
  const uint8_t* d = file.data();
  const size_t size = file.size();
  std::vector<Annotation> out;
  out.reserve(size / 2);
  int64_t time = 0;
  uint8_t chan = 0, num = 0;  // carried over to later annotations, as in getann
  size_t pos = 0;
  while (pos + 2 <= size) {
    const size_t at = pos;
    const unsigned word = d[pos] | (d[pos + 1] << 8);
    pos += 2;
    if (word == 0) return out;  // logical end of file
    const int code = static_cast<int>(word >> 10);
    const unsigned data = word & 0x3FFu;
    switch (code) {
      case kSkip: {
        if (pos + 4 > size) corrupt(path, at, "SKIP needs a 4-byte interval but the file ends");
        // PDP-11 order: high 16-bit word first, each word little-endian.
        const uint32_t hi = d[pos] | (d[pos + 1] << 8), lo = d[pos + 2] | (d[pos + 3] << 8);
        time += static_cast<int32_t>((hi << 16) | lo);
        pos += 4;
        break;
      }
      case kNum:
        num = static_cast<uint8_t>(data);
        if (!out.empty()) out.back().num = num;
        break;
      case kChn:
        chan = static_cast<uint8_t>(data);
        if (!out.empty()) out.back().channel = chan;
        break;
      case kSub:
        if (out.empty()) corrupt(path, at, "SUB before any annotation");
        out.back().subtype = static_cast<int8_t>(data & 0xFFu);
        break;
      case kAux: {
        if (out.empty()) corrupt(path, at, "AUX before any annotation");
        const size_t len = word & 0xFFu;
        if (pos + len > size)
          corrupt(path, at,
                  "AUX string of " + std::to_string(len) +
                      " bytes runs past the end "
                      "of the file (" +
                      std::to_string(size) + " bytes)");
        const char* text = reinterpret_cast<const char*>(d + pos);
        out.back().aux.assign(text, strnlen(text, len));  // rdann stops at a NUL, so do we
        pos += (len + 1) & ~size_t{1};                    // padded to keep words aligned
        break;
      }
      default: {
        time += data;
        if (time < 0)
          corrupt(path, at, "annotation time is negative (" + std::to_string(time) + ")");
        Annotation a;
        a.sample = time;
        a.code = static_cast<uint8_t>(code);
        a.channel = chan;
        a.num = num;
        out.push_back(std::move(a));
        break;
      }
    }
  }
  if (pos != size) corrupt(path, pos, "the file ends in the middle of a 16-bit word");
  // No end marker: WFDB reports "unexpected EOF" after returning every annotation; keep them.
  return out;
}

const char* annotation_mnemonic(uint8_t code) {
  static const char* const kNames[kLastCode + 1] = {
      " ", "N", "L",    "R",    "a",    "V",    "F",    "J",    "A",    "S",    "E",   "j", "/",
      "Q", "~", "[15]", "|",    "[17]", "s",    "T",    "*",    "D",    "\"",   "=",   "p", "B",
      "^", "t", "+",    "u",    "?",    "!",    "[",    "]",    "e",    "n",    "@",   "x", "f",
      "(", ")", "r",    "[42]", "[43]", "[44]", "[45]", "[46]", "[47]", "[48]", "[49]"};
  static const std::array<std::string, 256> kOthers = [] {
    std::array<std::string, 256> names;
    for (int c = 0; c < 256; ++c) names[c] = "[" + std::to_string(c) + "]";
    return names;
  }();
  return code <= kLastCode ? kNames[code] : kOthers[code].c_str();
}

std::string elapsed_time_string(int64_t sample, double sampling_hz) {
  int64_t ms = static_cast<int64_t>(static_cast<double>(sample) * 1000.0 / sampling_hz + 0.5);
  const int64_t msec = ms % 1000;
  ms /= 1000;
  const int64_t seconds = ms % 60, minutes = (ms / 60) % 60, hours = ms / 3600;
  char buf[64];
  if (hours > 0)
    std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld.%03lld", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(seconds),
                  static_cast<long long>(msec));
  else
    std::snprintf(buf, sizeof(buf), "%lld:%02lld.%03lld", static_cast<long long>(minutes),
                  static_cast<long long>(seconds), static_cast<long long>(msec));
  return buf;
}

}  // namespace hlm::wfdb
