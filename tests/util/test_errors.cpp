// hlm's typed errors: the fmt-style constructor formats its values (integers as std::to_string
// writes them, {:f} for a double as std::to_string does), a finished message keeps its braces
// (a path may hold them), and a format string that does not match its values still leaves the
// text of the error rather than throwing fmt's own.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "hlm/errors.h"

namespace {

TEST(Errors, FormatConstructorPutsTheValuesIntoTheMessage) {
  const std::string path = "/data/mitdb/100.dat";
  const hlm::DataError e("{}: {} samples but the header says {}; fetch the record again", path,
                         size_t{649999}, int64_t{650000});
  EXPECT_STREQ(e.what(),
               "/data/mitdb/100.dat: 649999 samples but the header says 650000; fetch the "
               "record again");
}

TEST(Errors, FormattedNumbersReadAsStdToStringWroteThem) {
  const double hz = 360.0;
  const int lead = -1;
  const uint64_t bytes = 18446744073709551615ULL;
  EXPECT_EQ(std::string(hlm::ConfigError("sampling_hz={:f}", hz).what()),
            "sampling_hz=" + std::to_string(hz));
  EXPECT_EQ(std::string(hlm::ConfigError("lead={} bytes={}", lead, bytes).what()),
            "lead=" + std::to_string(lead) + " bytes=" + std::to_string(bytes));
}

TEST(Errors, PlainMessageKeepsItsBraces) {
  EXPECT_STREQ(hlm::ConfigError(std::string("a {b} c")).what(), "a {b} c");
  EXPECT_STREQ(hlm::ConfigError("a {b} c").what(), "a {b} c");
  const char* message = "{}: no such {file}";
  EXPECT_STREQ(hlm::DataError(message).what(), "{}: no such {file}");
}

TEST(Errors, BracesInAFormattedValueAreNotFormatted) {
  const std::string path = "/runs/{run}/step_{3}";
  EXPECT_STREQ(hlm::CheckpointError("{}: missing", path).what(), "/runs/{run}/step_{3}: missing");
}

TEST(Errors, LiteralBracesInAFormatStringAreDoubled) {
  EXPECT_STREQ(hlm::InternalError("set {{{}}} is empty", "x").what(), "set {x} is empty");
}

// fmt checks format strings at compile time only under C++20; fmt::runtime stands in here for
// a C++17 call whose string and values disagree.
TEST(Errors, MismatchedFormatStringStillGivesTheErrorItsText) {
  std::string what;
  EXPECT_NO_THROW({
    const hlm::DataError e(fmt::runtime("{}: read {} of {} bytes"), "f.dat", 3);
    what = e.what();
  });
  EXPECT_NE(what.find("{}: read {} of {} bytes"), std::string::npos) << what;
}

TEST(Errors, EveryErrorTakesTheFormatConstructorAndIsAnHlmError) {
  const auto message = [](const hlm::Error& e) { return std::string(e.what()); };
  EXPECT_EQ(message(hlm::Error("{}-{}", 1, 2)), "1-2");
  EXPECT_EQ(message(hlm::ConfigError("{}-{}", 1, 2)), "1-2");
  EXPECT_EQ(message(hlm::DataError("{}-{}", 1, 2)), "1-2");
  EXPECT_EQ(message(hlm::PluginError("{}-{}", 1, 2)), "1-2");
  EXPECT_EQ(message(hlm::CheckpointError("{}-{}", 1, 2)), "1-2");
  EXPECT_EQ(message(hlm::InternalError("{}-{}", 1, 2)), "1-2");
  EXPECT_THROW(throw hlm::ConfigError("{}", 1), std::runtime_error);
}

}  // namespace
