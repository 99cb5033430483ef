// MIT annotation decoding on hand-built files: each pseudo-annotation (SKIP, NUM, SUB, CHN,
// AUX) applied as WFDB's getann does, plus rdann's mnemonics and elapsed-time strings.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "hlm/wfdb.h"
#include "support/wfdb_test_util.h"

namespace {

using hlm::test::TempDir;
using hlm::test::write_file;

void word(std::string& b, int code, int data) {
  const int w = (code << 10) | (data & 0x3FF);
  b += char(w & 0xFF);
  b += char(w >> 8);
}

TEST(WfdbReader, AppliesSkipNumSubChnAndAuxLikeGetann) {
  TempDir dir;
  std::string b;
  word(b, 28, 5);  // '+' at 5
  word(b, 63, 5);  // AUX "(AFIB", odd length: one pad byte follows
  b += std::string("(AFIB") + '\0';
  word(b, 1, 100);  // N at 105
  word(b, 62, 1);   // CHN 1 (sticky)
  word(b, 60, 7);   // NUM 7 (sticky)
  word(b, 59, 0);   // SKIP 70000: high word first
  b += char((70000 >> 16) & 0xFF);
  b += char((70000 >> 24) & 0xFF);
  b += char(70000 & 0xFF);
  b += char((70000 >> 8) & 0xFF);
  word(b, 5, 3);       // V at 105 + 70000 + 3
  word(b, 61, 0x3FF);  // SUB -1 (8-bit, signed)
  word(b, 14, 2);      // '~' two later: subtype resets, chan/num carry
  word(b, 63, 4);      // AUX with an embedded NUL: rdann prints up to it
  b += std::string("ab\0c", 4);
  word(b, 0, 0);  // end
  word(b, 1, 1);  // ignored: after the end marker
  write_file(dir.file("x.atr"), b);
  const std::vector<hlm::Annotation> a = hlm::wfdb::read_annotations(dir.file("x.atr"));
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].sample, 5);
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(a[0].code), "+");
  EXPECT_EQ(a[0].aux, "(AFIB");
  EXPECT_EQ(a[1].sample, 105);
  EXPECT_EQ(a[1].channel, 1);
  EXPECT_EQ(a[1].num, 7);
  EXPECT_EQ(a[1].aux, "");
  EXPECT_EQ(a[2].sample, 70108);
  EXPECT_EQ(a[2].code, 5);
  EXPECT_EQ(a[2].subtype, -1);
  EXPECT_EQ(a[2].channel, 1);
  EXPECT_EQ(a[2].num, 7);
  EXPECT_EQ(a[3].sample, 70110);
  EXPECT_EQ(a[3].subtype, 0);
  EXPECT_EQ(a[3].num, 7);
  EXPECT_EQ(a[3].aux, "ab");
}

TEST(WfdbReader, ReadsARecordWithoutAnnotationsWhenTheFileIsAbsentOrNotAsked) {
  TempDir dir;
  write_file(dir.file("r.hea"), "r 0 360\n");
  std::string b;
  word(b, 1, 10);
  word(b, 0, 0);
  write_file(dir.file("r.qrs"), b);
  EXPECT_TRUE(hlm::wfdb::read_record(dir.path(), "r").annotations.empty());  // no r.atr
  EXPECT_EQ(hlm::wfdb::read_record(dir.path(), "r", {"qrs", true, true}).annotations.size(), 1u);
  EXPECT_TRUE(hlm::wfdb::read_record(dir.path(), "r", {"", true, true}).annotations.empty());
}

TEST(WfdbReader, NamesAnnotationCodesAsRdannPrintsThem) {
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(1), "N");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(5), "V");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(12), "/");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(14), "~");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(15), "[15]");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(22), "\"");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(28), "+");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(41), "r");
  EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(55), "[55]");
}

// Every annotation code, read by its rdann mnemonic, to its AAMI class (EC57, de Chazal 2004):
// N = N L R e j, S = A a J S, V = V E, F = F, Q = / f Q. The other beat codes (B ? ! n r) and
// every non-beat code have no class. Keyed by mnemonic so a code number mistaken for another
// (f is 38; 35 is n) fails here.
TEST(WfdbReader, GivesEachBeatMnemonicItsAamiClass) {
  const std::map<std::string, hlm::BeatClass> classes = {
      {"N", hlm::BeatClass::kN}, {"L", hlm::BeatClass::kN}, {"R", hlm::BeatClass::kN},
      {"e", hlm::BeatClass::kN}, {"j", hlm::BeatClass::kN}, {"A", hlm::BeatClass::kS},
      {"a", hlm::BeatClass::kS}, {"J", hlm::BeatClass::kS}, {"S", hlm::BeatClass::kS},
      {"V", hlm::BeatClass::kV}, {"E", hlm::BeatClass::kV}, {"F", hlm::BeatClass::kF},
      {"/", hlm::BeatClass::kQ}, {"f", hlm::BeatClass::kQ}, {"Q", hlm::BeatClass::kQ}};
  std::set<std::string> classless_beats;
  for (int code = 0; code <= 49; ++code) {
    const std::string mnemonic = hlm::wfdb::annotation_mnemonic(uint8_t(code));
    const auto it = classes.find(mnemonic);
    const hlm::BeatClass expected = it == classes.end() ? hlm::BeatClass::kNone : it->second;
    EXPECT_EQ(hlm::aami_class(uint8_t(code)), expected)
        << "code " << code << " '" << mnemonic << "'";
    if (hlm::is_beat_code(uint8_t(code)) && expected == hlm::BeatClass::kNone)
      classless_beats.insert(mnemonic);
  }
  EXPECT_EQ(classless_beats, (std::set<std::string>{"B", "?", "!", "n", "r"}));
}

TEST(WfdbReader, FormatsElapsedTimeLikeRdann) {
  EXPECT_EQ(hlm::wfdb::elapsed_time_string(9, 360), "0:00.025");
  EXPECT_EQ(hlm::wfdb::elapsed_time_string(46, 360), "0:00.128");
  EXPECT_EQ(hlm::wfdb::elapsed_time_string(22415, 360), "1:02.264");
  EXPECT_EQ(hlm::wfdb::elapsed_time_string(128 * 3723, 128), "1:02:03.000");
}

}  // namespace
