// Every decodable WFDB signal format on synthetic records: samples encoded here as the WFDB
// writers (w212, w310, w311, ...) lay them out must come back unchanged, invalid markers mapped.
#include <gtest/gtest.h>

#include <random>

#include "hlm/wfdb.h"
#include "support/wfdb_test_util.h"

namespace {

using hlm::test::TempDir;
using hlm::test::write_file;

void put16(std::string& b, int v) {
  b += char(v & 0xFF);
  b += char((v >> 8) & 0xFF);
}

// Encodes a stream of samples (already interleaved by frame) in `format`.
std::string encode(int format, const std::vector<int32_t>& v, int initial_value = 0) {
  std::string b;
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) {
    const int32_t x = v[i];
    switch (format) {
      case 8:
        b += char(x - (i ? v[i - 1] : initial_value));
        break;
      case 16:
        put16(b, x);
        break;
      case 61:
        b += char((x >> 8) & 0xFF);
        b += char(x & 0xFF);
        break;
      case 80:
        b += char(x + 128);
        break;
      case 160:
        put16(b, x + 32768);
        break;
      case 24:
        put16(b, x);
        b += char((x >> 16) & 0xFF);
        break;
      case 32:
        put16(b, x);
        put16(b, x >> 16);
        break;
      default:
        break;
    }
  }
  auto at = [&](size_t i) { return i < n ? v[i] : 0; };
  if (format == 212)
    for (size_t i = 0; i < n; i += 2) {
      b += char(at(i) & 0xFF);
      b += char(((at(i) >> 8) & 0x0F) | ((at(i + 1) >> 4) & 0xF0));
      if (i + 1 < n) b += char(at(i + 1) & 0xFF);
    }
  if (format == 310)
    for (size_t i = 0; i < n; i += 3) {
      put16(b, ((at(i) & 0x3FF) << 1) | ((at(i + 2) & 0x1F) << 11));
      if (i + 1 < n) put16(b, ((at(i + 1) & 0x3FF) << 1) | (((at(i + 2) >> 5) & 0x1F) << 11));
    }
  if (format == 311)
    for (size_t i = 0; i < n; i += 3) {
      const uint32_t w =
          (at(i) & 0x3FF) | ((at(i + 1) & 0x3FF) << 10) | ((at(i + 2) & 0x3FF) << 20);
      const size_t bytes = i + 2 < n ? 4 : i + 1 < n ? 3 : 2;
      for (size_t k = 0; k < bytes; ++k) b += char((w >> (8 * k)) & 0xFF);
    }
  return b;
}

int bits_of(int format) {
  switch (format) {
    case 8:
      return 7;  // differences stay small
    case 80:
      return 8;
    case 212:
      return 12;
    case 310:
    case 311:
      return 10;
    case 24:
      return 24;
    case 32:
      return 32;
    default:
      return 16;
  }
}

// Round trip: two signals, an odd frame count (a partial packed group at the end), the
// invalid marker in a few places, and the header checksum of the written samples.
TEST(WfdbReader, DecodesEveryFormatLikeTheWfdbWriters) {
  const int formats[] = {8, 16, 24, 32, 61, 80, 160, 212, 310, 311};
  for (int format : formats) {
    SCOPED_TRACE("format " + std::to_string(format));
    TempDir dir;
    const int frames = 1001;
    const int64_t lo = -(int64_t{1} << (bits_of(format) - 1)), hi = -lo - 1;
    std::mt19937 rng(format);
    std::uniform_int_distribution<int64_t> dist(format == 8 ? -40 : lo + 1, format == 8 ? 40 : hi);
    std::vector<std::vector<int32_t>> signals(2, std::vector<int32_t>(frames));
    std::vector<int32_t> interleaved;
    for (int f = 0; f < frames; ++f)
      for (int s = 0; s < 2; ++s) {
        int32_t x = static_cast<int32_t>(dist(rng));
        if (format == 8)
          x = (f ? signals[s][f - 1] : 0) + x;
        else if (f % 97 == 5 + s)
          x = static_cast<int32_t>(lo);  // the invalid marker
        signals[s][f] = x;
      }
    for (int f = 0; f < frames; ++f)
      for (int s = 0; s < 2; ++s) interleaved.push_back(signals[s][f]);
    // Format 8 stores differences per signal, so write it one file per signal.
    std::string header = "syn 2 500 " + std::to_string(frames) + "\n";
    for (int s = 0; s < 2; ++s) {
      uint32_t sum = 0;
      for (int32_t x : signals[s]) sum += static_cast<uint32_t>(x);
      const std::string file = format == 8 ? "syn" + std::to_string(s) + ".dat" : "syn.dat";
      header += file + " " + std::to_string(format) + " 100/mV 0 0 " +
                std::to_string(signals[s][0]) + " " + std::to_string(int16_t(sum & 0xFFFF)) +
                " 0 lead " + std::to_string(s) + "\n";
    }
    write_file(dir.file("syn.hea"), header);
    if (format == 8) {
      // The first difference is taken from the header's initial value.
      write_file(dir.file("syn0.dat"), encode(8, signals[0], signals[0][0]));
      write_file(dir.file("syn1.dat"), encode(8, signals[1], signals[1][0]));
    } else {
      write_file(dir.file("syn.dat"), encode(format, interleaved));
    }
    const hlm::Record r = hlm::wfdb::read_record(dir.path(), "syn");
    ASSERT_EQ(r.frames, frames);
    ASSERT_EQ(r.digital.size(), 2u);
    for (int s = 0; s < 2; ++s)
      for (int f = 0; f < frames; ++f) {
        const int32_t want =
            format != 8 && signals[s][f] == lo ? hlm::kInvalidSample : signals[s][f];
        ASSERT_EQ(r.digital[s][f], want) << "signal " << s << " frame " << f;
      }
    EXPECT_EQ(r.signals[1].description, "lead 1");
  }
}

TEST(WfdbReader, AppliesSamplesPerFrameSkewAndByteOffset) {
  TempDir dir;
  // Signal 0 at 2 samples per frame, signal 1 skewed by 2 frames; 16 bytes of preamble.
  const int frames = 50;
  std::vector<int32_t> stream;
  for (int f = 0; f < frames + 2; ++f) {
    stream.push_back(10 * f);
    stream.push_back(10 * f + 5);
    stream.push_back(-f);
  }
  write_file(dir.file("mf.dat"), std::string(16, '\x7f') + encode(16, stream));
  write_file(dir.file("mf.hea"),
             "mf 2 250/1000(7) 50 10:20:30 01/02/2003\n"
             "mf.dat 16x2+16 200(3)/uV 12 0 0\n"
             "mf.dat 16:2+16 400\n");
  const hlm::wfdb::Header h = hlm::wfdb::read_header(dir.file("mf.hea"));
  EXPECT_EQ(h.counter_hz, 1000.0);
  EXPECT_EQ(h.base_counter, 7.0);
  EXPECT_EQ(h.base_time, "10:20:30");
  EXPECT_EQ(h.base_date, "01/02/2003");
  EXPECT_EQ(h.signals[0].baseline, 3);
  EXPECT_EQ(h.signals[0].units, "uV");
  EXPECT_EQ(h.signals[1].units, "mV");
  EXPECT_EQ(h.signals[1].description, "record mf, signal 1");
  const hlm::Record r = hlm::wfdb::read_record(dir.path(), "mf");
  ASSERT_EQ(r.digital[0].size(), 2u * frames);
  ASSERT_EQ(r.digital[1].size(), static_cast<size_t>(frames));
  for (int f = 0; f < frames; ++f) {
    EXPECT_EQ(r.digital[0][2 * f], 10 * f);
    EXPECT_EQ(r.digital[0][2 * f + 1], 10 * f + 5);
    EXPECT_EQ(r.digital[1][f], -(f + 2));
  }
}

TEST(WfdbReader, DerivesTheFrameCountFromTheFileWhenTheHeaderOmitsIt) {
  TempDir dir;
  write_file(dir.file("n.dat"), encode(212, {1, 2, 3, 4, 5, 6, 7}));  // 3.5 frames of 2
  write_file(dir.file("n.hea"), "n 2 360\nn.dat 212\nn.dat 212\n");
  const hlm::Record r = hlm::wfdb::read_record(dir.path(), "n");
  EXPECT_EQ(r.frames, 3);
  EXPECT_EQ(r.digital[1], (std::vector<int32_t>{2, 4, 6}));
  EXPECT_FALSE(r.signals[0].gain_given);
  EXPECT_EQ(r.signals[0].gain, 200.0);
  EXPECT_EQ(r.signals[0].adc_resolution, 12);
}

}  // namespace
