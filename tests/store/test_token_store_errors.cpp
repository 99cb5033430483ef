// Token store failure modes: corruption, truncation, unknown versions, foreign tokenizers,
// bad input, and resuming an interrupted writer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "hlm/errors.h"
#include "hlm/token_store.h"

namespace fs = std::filesystem;
using hlm::Beats;
using hlm::TokenStore;
using hlm::TokenStoreWriter;

namespace {

Beats beats(const std::string& name, size_t n, uint32_t first_token = 4) {
  Beats b;
  b.record = name;
  for (size_t i = 0; i < n; ++i) {
    b.positions.push_back(static_cast<int64_t>(i * 250));
    b.rr_seconds.push_back(0.7f);
    b.labels.push_back(0);
    b.tokens.push_back(first_token + static_cast<uint32_t>(i % 50));
  }
  return b;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Runs f and returns the DataError message, or fails.
template <typename F>
std::string data_error(F&& f) {
  try {
    f();
  } catch (const hlm::DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected hlm::DataError";
  return "";
}

class TokenStoreErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hlm_store_err_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "tokens.bin").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write_store() {
    TokenStoreWriter writer(path_, 64, "rhythm-00000000");
    writer.append(beats("100", 500));
    writer.append(beats("101", 300));
    writer.finish();
  }
  fs::path dir_;
  std::string path_;
};

}  // namespace

TEST_F(TokenStoreErrors, ChecksumDetectsACorruptPayloadByte) {
  write_store();
  std::string bytes = read_all(path_);
  bytes[bytes.size() / 2] ^= 0x20;
  write_all(path_, bytes);
  const std::string msg = data_error([&] { TokenStore::open(path_); });
  EXPECT_NE(msg.find(path_), std::string::npos) << msg;
  EXPECT_NE(msg.find("checksum mismatch"), std::string::npos) << msg;
  // Skipping verification maps it anyway: the caller asked for speed over safety.
  EXPECT_NO_THROW(TokenStore::open(path_, /*verify_checksum=*/false));
}

TEST_F(TokenStoreErrors, ChecksumDetectsACorruptHeader) {
  write_store();
  std::string bytes = read_all(path_);
  bytes[16] ^= 0x01;  // vocab_size
  write_all(path_, bytes);
  const std::string msg = data_error([&] { TokenStore::open(path_, false); });
  EXPECT_NE(msg.find("header checksum mismatch"), std::string::npos) << msg;
}

TEST_F(TokenStoreErrors, DetectsATruncatedFile) {
  write_store();
  const std::string bytes = read_all(path_);
  write_all(path_, bytes.substr(0, bytes.size() - 100));
  std::string msg = data_error([&] { TokenStore::open(path_); });
  EXPECT_NE(msg.find(path_), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  write_all(path_, bytes.substr(0, 60));
  msg = data_error([&] { TokenStore::open(path_); });
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST_F(TokenStoreErrors, RejectsAnUnknownVersionNamingFileFoundAndExpected) {
  write_store();
  std::string bytes = read_all(path_);
  const uint32_t version = 7;
  std::memcpy(&bytes[8], &version, sizeof(version));
  write_all(path_, bytes);
  const std::string msg = data_error([&] { TokenStore::open(path_); });
  EXPECT_NE(msg.find(path_), std::string::npos) << msg;
  EXPECT_NE(msg.find("version 7 is not supported"), std::string::npos) << msg;
  EXPECT_NE(msg.find("reads versions 1 to 2"), std::string::npos) << msg;
}

TEST_F(TokenStoreErrors, RejectsAFileThatIsNotATokenStore) {
  write_all(path_, std::string(4096, 'x'));
  const std::string msg = data_error([&] { TokenStore::open(path_); });
  EXPECT_NE(msg.find("not a token store"), std::string::npos) << msg;
}

TEST_F(TokenStoreErrors, ExpectTokenizerNamesBothIdentities) {
  write_store();
  const TokenStore s = TokenStore::open(path_);
  EXPECT_NO_THROW(s.expect_tokenizer("rhythm-00000000"));
  const std::string msg = data_error([&] { s.expect_tokenizer("beat-vq-1111"); });
  EXPECT_NE(msg.find("rhythm-00000000"), std::string::npos) << msg;
  EXPECT_NE(msg.find("beat-vq-1111"), std::string::npos) << msg;
}

TEST_F(TokenStoreErrors, RejectsBadRecordsWithoutWritingThem) {
  TokenStoreWriter writer(path_, 64, "id");
  writer.append(beats("a", 3));
  EXPECT_NE(data_error([&] { writer.append(beats("a", 3)); }).find("already appended"),
            std::string::npos);
  EXPECT_NE(data_error([&] { writer.append(beats("b", 3, 62)); }).find(">= vocab_size 64"),
            std::string::npos);
  Beats mismatched = beats("c", 3);
  mismatched.rr_seconds.pop_back();
  EXPECT_NE(data_error([&] { writer.append(mismatched); }).find("must match"), std::string::npos);
  EXPECT_EQ(writer.record_count(), 1u);
}

TEST_F(TokenStoreErrors, ResumesAnInterruptedWriterAndMatchesAnUninterruptedOne) {
  {
    TokenStoreWriter writer(path_, 64, "id");
    writer.append(beats("b", 40));
    writer.append(beats("a", 30));
  }  // interrupted: no finish()
  {
    TokenStoreWriter writer(path_, 64, "id");
    EXPECT_EQ(writer.resumed_record_count(), 2u);
    EXPECT_TRUE(writer.has_record("a"));
    EXPECT_FALSE(writer.has_record("c"));
    writer.append(beats("c", 20));
    writer.finish();
  }
  const std::string reference = (dir_ / "reference.bin").string();
  TokenStoreWriter once(reference, 64, "id");
  for (const char* name : {"a", "c", "b"})
    once.append(beats(name, name[0] == 'a' ? 30 : name[0] == 'b' ? 40 : 20));
  once.finish();
  EXPECT_EQ(read_all(path_), read_all(reference));
}

TEST_F(TokenStoreErrors, ResumeDropsATornLastRecord) {
  {
    TokenStoreWriter writer(path_, 64, "id");
    writer.append(beats("a", 30));
    writer.append(beats("b", 40));
  }
  const std::string tmp = path_ + ".tmp";
  fs::resize_file(tmp, fs::file_size(tmp) - 7);
  TokenStoreWriter writer(path_, 64, "id");
  EXPECT_EQ(writer.resumed_record_count(), 1u);
  EXPECT_FALSE(writer.has_record("b"));
  writer.append(beats("b", 40));
  writer.finish();
  EXPECT_EQ(TokenStore::open(path_).token_count(), 70u);
}

TEST_F(TokenStoreErrors, ResumeStartsOverForAnotherTokenizer) {
  {
    TokenStoreWriter writer(path_, 64, "old-tokenizer");
    writer.append(beats("a", 30));
  }
  TokenStoreWriter writer(path_, 64, "new-tokenizer");
  EXPECT_EQ(writer.resumed_record_count(), 0u);
  EXPECT_EQ(writer.record_count(), 0u);
  TokenStoreWriter fresh(path_ + "2", 64, "id", /*resume=*/false);
  EXPECT_EQ(fresh.record_count(), 0u);
}
