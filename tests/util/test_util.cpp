// The small helpers every cache key and error message rests on: FNV-1a against its published
// test vectors, hex formatting, did-you-mean suggestions, and build IDs of loaded code.
#include <gtest/gtest.h>

#include "hlm/util.h"
#include "util/build_id.h"

namespace {

// Test vectors from the FNV reference (Fowler, Noll, Vo; the 64-bit FNV-1a column).
TEST(Util, Fnv1a64MatchesTheReferenceVectors) {
  EXPECT_EQ(hlm::fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(hlm::fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(hlm::fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(hlm::hex64(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
  EXPECT_EQ(hlm::hex64(1), "0000000000000001");
}

TEST(Util, SuggestsOnlyACloseName) {
  EXPECT_EQ(hlm::did_you_mean("bacth", {"batch", "steps", "lr"}), " (did you mean 'batch'?)");
  EXPECT_EQ(hlm::did_you_mean("model", {"batch", "steps"}), "");
}

// The linker's build ID of this test program: 40 hex digits (SHA-1), the same every call, and
// part of the host identity that goes into stage cache keys.
TEST(Util, ReadsTheBuildIdOfTheRunningProgram) {
  const std::string id = hlm::build_id_of("");
  ASSERT_EQ(id.size(), 40u) << id;
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_EQ(hlm::build_id_of(""), id);
  const std::string host = hlm::host_build_identity();
  EXPECT_EQ(host.rfind("hlm=" + id + ";", 0), 0u) << host;
  EXPECT_NE(host.find("libhlm_base.so="), std::string::npos) << host;
}

}  // namespace
