// Bad input: corrupted copies of record 208 (and small synthetic headers) written to a temp
// folder must raise hlm::DataError naming the file and the problem, or warn on a checksum.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "hlm/errors.h"
#include "hlm/wfdb.h"
#include "support/wfdb_test_util.h"

namespace {

using hlm::test::data_path;
using hlm::test::read_file;
using hlm::test::TempDir;
using hlm::test::write_file;

// The message of the DataError `f` throws, or a failure when it throws none.
template <class F>
std::string data_error(F f) {
  try {
    f();
  } catch (const hlm::DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no hlm::DataError thrown";
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A copy of 208 in a temp folder with its header, signals and annotations passed through edits.
struct Copy208 {
  TempDir dir;
  explicit Copy208(const std::string& hea, const std::string& dat, const std::string& atr) {
    write_file(dir.file("208.hea"), hea);
    write_file(dir.file("208.dat"), dat);
    write_file(dir.file("208.atr"), atr);
  }
};

std::string hea208() { return read_file(data_path("mitdb/208.hea")); }
std::string dat208() { return read_file(data_path("mitdb/208.dat")); }
std::string atr208() { return read_file(data_path("mitdb/208.atr")); }

TEST(WfdbReader, RefusesATruncatedSignalFileNamingItAndTheShortfall) {
  HLM_REQUIRE_DATA("mitdb");
  Copy208 c(hea208(), dat208().substr(0, 1000), atr208());
  const std::string m = data_error([&] { hlm::wfdb::read_record(c.dir.path(), "208"); });
  EXPECT_NE(m.find(c.dir.file("208.dat")), std::string::npos) << m;
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
  EXPECT_NE(m.find("need 1950000 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("holds 1000"), std::string::npos) << m;
}

TEST(WfdbReader, RefusesAHeaderDeclaringMoreSignalsThanItDescribes) {
  HLM_REQUIRE_DATA("mitdb");
  Copy208 c(replace(hea208(), "208 2 360", "208 3 360"), "", "");
  const std::string m = data_error([&] { hlm::wfdb::read_header(c.dir.file("208.hea")); });
  EXPECT_NE(m.find(c.dir.file("208.hea") + ":1:"), std::string::npos) << m;
  EXPECT_NE(m.find("declares 3 signal(s) but 2 signal line(s) follow"), std::string::npos) << m;
}

TEST(WfdbReader, RefusesAHeaderDeclaringFewerSignalsThanItDescribes) {
  HLM_REQUIRE_DATA("mitdb");
  Copy208 c(replace(hea208(), "208 2 360", "208 1 360"), "", "");
  const std::string m = data_error([&] { hlm::wfdb::read_record(c.dir.path(), "208"); });
  EXPECT_NE(m.find(c.dir.file("208.hea") + ":3:"), std::string::npos) << m;
  EXPECT_NE(m.find("declares 1 signal(s) but more signal lines follow"), std::string::npos) << m;
}

TEST(WfdbReader, RefusesAnUnknownSignalFormat) {
  HLM_REQUIRE_DATA("mitdb");
  Copy208 c(replace(hea208(), "208.dat 212", "208.dat 999"), dat208(), "");
  const std::string m = data_error([&] { hlm::wfdb::read_record(c.dir.path(), "208"); });
  EXPECT_NE(m.find(c.dir.file("208.hea") + ":2:"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown signal format 999"), std::string::npos) << m;
}

TEST(WfdbReader, RefusesAnAnnotationFileCutInsideAnAuxString) {
  HLM_REQUIRE_DATA("mitdb");
  // 208.atr opens with '+' then AUX "(N\0" (3 bytes): keep one byte of the string.
  Copy208 c(hea208(), dat208(), atr208().substr(0, 5));
  const std::string m = data_error([&] { hlm::wfdb::read_record(c.dir.path(), "208"); });
  EXPECT_NE(m.find(c.dir.file("208.atr") + ": byte 2:"), std::string::npos) << m;
  EXPECT_NE(m.find("AUX string of 3 bytes runs past the end"), std::string::npos) << m;
}

TEST(WfdbReader, RefusesAnAnnotationFileEndingInsideAWord) {
  HLM_REQUIRE_DATA("mitdb");
  const std::string atr = atr208();
  Copy208 c("", "", atr.substr(0, atr.size() - 1));
  const std::string m = data_error([&] { hlm::wfdb::read_annotations(c.dir.file("208.atr")); });
  EXPECT_NE(m.find(c.dir.file("208.atr") + ": byte "), std::string::npos) << m;
  EXPECT_NE(m.find("ends in the middle of a 16-bit word"), std::string::npos) << m;
}

TEST(WfdbReader, WarnsButReadsWhenASignalChecksumDiffers) {
  HLM_REQUIRE_DATA("mitdb");
  Copy208 c(replace(hea208(), "1003 8074", "1003 8075"), dat208(), atr208());
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("wfdb_test", sink));
  const hlm::Record r = hlm::wfdb::read_record(c.dir.path(), "208");
  spdlog::set_default_logger(previous);
  EXPECT_EQ(r.frames, 650000);
  const std::vector<std::string> lines = sink->last_formatted();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("208.dat: signal 0 (MLII) checksum mismatch: header"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("says 8075, the samples sum to 8074"), std::string::npos) << lines[0];
}

TEST(WfdbReader, RefusesMultiSegmentRecords) {
  TempDir dir;
  write_file(dir.file("m.hea"), "m/2 1 360 200\nm_1 100\nm_2 100\n");
  const std::string m = data_error([&] { hlm::wfdb::read_record(dir.path(), "m"); });
  EXPECT_NE(m.find(dir.file("m.hea") + ":1: multi-segment record 'm/2' is not supported"),
            std::string::npos)
      << m;
}

TEST(WfdbReader, RefusesARecordMissingOneOfItsSignalFiles) {
  TempDir dir;
  write_file(dir.file("g.hea"), "g 2 360 1\ng.dat 16\ng.xyz 16\n");
  write_file(dir.file("g.dat"), std::string(2, '\0'));
  const std::string m = data_error([&] { hlm::wfdb::read_record(dir.path(), "g"); });
  EXPECT_NE(m.find(dir.file("g.xyz") + ": signal file of record g is missing"), std::string::npos)
      << m;
}

// A header is read only up to its bound: a file of 5 MiB (a data file named .hea) or a
// folder named so is refused at once, naming it.
TEST(WfdbReader, RefusesAHeaderLargerThanItsBoundOrNotAFile) {
  TempDir dir;
  write_file(dir.file("big.hea"), std::string(5 << 20, '#'));
  const std::string big = data_error([&] { hlm::wfdb::read_header(dir.file("big.hea")); });
  EXPECT_NE(big.find(dir.file("big.hea") + ": 5242880 bytes, more than the 4 MiB a WFDB header"),
            std::string::npos)
      << big;
  std::filesystem::create_directory(dir.file("folder.hea"));
  const std::string folder = data_error([&] { hlm::wfdb::read_header(dir.file("folder.hea")); });
  EXPECT_NE(folder.find("folder.hea: not a regular file"), std::string::npos) << folder;
}

TEST(WfdbReader, NamesTheLineOfAMalformedHeaderField) {
  TempDir dir;
  write_file(dir.file("h.hea"), "# a comment\nh 1 360 10\nh.dat 16 200 12 zero\n");
  const std::string m = data_error([&] { hlm::wfdb::read_header(dir.file("h.hea")); });
  EXPECT_NE(m.find(dir.file("h.hea") + ":3: expected an integer for the ADC zero, got 'zero'"),
            std::string::npos)
      << m;
  const std::string missing = data_error([&] { hlm::wfdb::read_record(dir.path(), "nope"); });
  EXPECT_NE(missing.find(dir.file("nope.hea") + ": cannot open"), std::string::npos) << missing;
}

// Files a record names are confined to the dataset's folder, symlinks resolved: a record name
// with '..', a header symlinked from outside, a signal file a header places outside, and a
// RECORDS entry pointing out are all refused by name.
TEST(WfdbReader, RefusesRecordsAndSignalFilesOutsideTheDatasetFolder) {
  TempDir outside;
  write_file(outside.file("o.hea"), "o 1 360 1\no.dat 16\n");
  write_file(outside.file("o.dat"), std::string(2, '\0'));
  TempDir dir;
  const std::string up = "../" + std::filesystem::path(outside.path()).filename().string() + "/o";
  std::string m = data_error([&] { hlm::wfdb::read_record(dir.path(), up); });
  EXPECT_NE(m.find("outside the dataset's folder " + dir.path()), std::string::npos) << m;

  std::filesystem::create_symlink(outside.file("o.hea"), dir.file("link.hea"));
  m = data_error([&] { hlm::wfdb::read_record(dir.path(), "link"); });
  EXPECT_NE(m.find(dir.file("link") + ".hea: outside the dataset's folder"), std::string::npos)
      << m;

  write_file(dir.file("s.hea"), "s 1 360 1\n" + up + ".dat 16\n");
  m = data_error([&] { hlm::wfdb::read_record(dir.path(), "s"); });
  EXPECT_NE(
      m.find(dir.file("s.hea") + ": signal 0 is in '" + up + ".dat', outside the record's folder"),
      std::string::npos)
      << m;

  write_file(dir.file("RECORDS"), "s\n" + up + "\n");
  m = data_error([&] { hlm::wfdb::list_records(dir.path()); });
  EXPECT_NE(m.find(dir.file("RECORDS") + ": the entry '" + up + "' names a header outside"),
            std::string::npos)
      << m;
}

// Headers with too few fields, and sampling rates and gains no record can have, are refused at
// their line (a gain of 0 stays WFDB's "uncalibrated"; negative gains are allowed).
TEST(WfdbReader, RefusesHeadersWithTooFewFieldsOrImpossibleRatesAndGains) {
  TempDir dir;
  const auto header_error = [&](const std::string& text) {
    write_file(dir.file("h.hea"), text);
    return data_error([&] { hlm::wfdb::read_header(dir.file("h.hea")); });
  };
  const std::string at1 = dir.file("h.hea") + ":1: ";
  const std::string at2 = dir.file("h.hea") + ":2: ";
  std::string m = header_error("h\n");
  EXPECT_NE(m.find(at1 + "the record line has no signal count"), std::string::npos) << m;
  m = header_error("h 1 360 10\nh.dat\n");
  EXPECT_NE(m.find(at2 + "signal line has no format"), std::string::npos) << m;
  m = header_error("# only a comment\n");
  EXPECT_NE(m.find("no record line"), std::string::npos) << m;
  for (const std::string rate : {"0", "-360", "nan"}) {
    m = header_error("h 1 " + rate + " 10\nh.dat 16\n");
    EXPECT_NE(m.find(at1 + "sampling frequency must be positive"), std::string::npos) << m;
  }
  for (const std::string rate : {"1e300", "inf", "2e6"}) {
    m = header_error("h 1 " + rate + " 10\nh.dat 16\n");
    EXPECT_NE(m.find(at1 + "sampling frequency '" + rate + "' is not plausible"), std::string::npos)
        << m;
  }
  for (const std::string gain : {"inf", "nan", "1e999"}) {
    m = header_error("h 1 360 10\nh.dat 16 " + gain + "\n");
    EXPECT_NE(m.find(at2 + "gain '" + gain + "' is not a finite number"), std::string::npos) << m;
  }
  write_file(dir.file("h.hea"), "h 1 0.9765625 10\nh.dat 16 -200/mV\n");
  const hlm::wfdb::Header h = hlm::wfdb::read_header(dir.file("h.hea"));  // both plausible
  EXPECT_EQ(h.signals.at(0).gain, -200.0);
}

TEST(WfdbReader, RefusesARecordWithoutItsRhythmAnnotatorsFile) {
  TempDir dir;
  write_file(dir.file("r1.hea"), "r1 0 250\n");
  hlm::wfdb::ReadOptions options;
  options.annotator = "qrs";
  options.rhythm_annotator = "atr";
  const std::string message =
      data_error([&] { hlm::wfdb::read_record(dir.path(), "r1", options); });
  EXPECT_NE(message.find(dir.file("r1.atr") + ": missing"), std::string::npos) << message;
  EXPECT_NE(message.find("rhythm_annotator"), std::string::npos) << message;
}

}  // namespace
