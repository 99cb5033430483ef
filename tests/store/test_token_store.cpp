// Token store round trips: what the writer appends is what the mapped reader returns.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "hlm/util.h"

namespace fs = std::filesystem;
using hlm::Beats;
using hlm::TokenStore;
using hlm::TokenStoreWriter;

namespace {

Beats make_beats(const std::string& name, size_t n, uint32_t vocab, uint32_t seed) {
  Beats b;
  b.record = name;
  b.sampling_hz = 360.0;
  for (size_t i = 0; i < n; ++i) {
    b.positions.push_back(static_cast<int64_t>(100 + 300 * i + seed));
    b.rr_seconds.push_back(i == 0 ? 0.0f : 0.8f + 0.001f * static_cast<float>(i));
    b.labels.push_back(static_cast<uint8_t>((i + seed) % hlm::kBeatClassCount));
    b.tokens.push_back((seed * 7919u + static_cast<uint32_t>(i) * 104729u) % vocab);
  }
  return b;
}

class TokenStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hlm_store_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  // Writes the records, reopens the store and checks every array against them.
  void round_trip(uint32_t vocab, const std::vector<Beats>& records) {
    const std::string path = file("tokens.bin");
    TokenStoreWriter writer(path, vocab, "beat-vq-0123456789abcdef");
    for (const Beats& b : records) writer.append(b);
    writer.finish();
    const TokenStore s = TokenStore::open(path);
    EXPECT_EQ(s.vocab_size(), vocab);
    EXPECT_EQ(s.tokenizer_identity(), "beat-vq-0123456789abcdef");
    EXPECT_EQ(s.token_bytes(), vocab > 65536 ? 4u : 2u);
    ASSERT_EQ(s.record_count(), records.size());
    size_t total = 0;
    for (size_t r = 0; r < records.size(); ++r) {
      const Beats& b = records[r];
      const TokenStore::RecordView v = s.record(r);
      EXPECT_EQ(v.name, b.record);
      EXPECT_EQ(v.offset, total);
      ASSERT_EQ(v.length, b.size());
      for (size_t i = 0; i < b.size(); ++i) {
        ASSERT_EQ(s.token(v.offset + i), b.tokens[i]) << b.record << " beat " << i;
        ASSERT_EQ(s.positions()[v.offset + i], b.positions[i]);
        ASSERT_EQ(s.rr_seconds()[v.offset + i], b.rr_seconds[i]);
        ASSERT_EQ(s.labels()[v.offset + i], b.labels[i]);
      }
      total += b.size();
    }
    EXPECT_EQ(s.token_count(), total);
  }

  fs::path dir_;
};

}  // namespace

TEST_F(TokenStoreTest, RoundTripsUint16Tokens) {
  round_trip(516, {make_beats("100", 2273, 516, 1), make_beats("101", 1865, 516, 2)});
}

TEST_F(TokenStoreTest, RoundTripsUint32TokensWhenVocabularyExceedsUint16) {
  round_trip(70000, {make_beats("a", 5000, 70000, 3), make_beats("b", 17, 70000, 4)});
}

TEST_F(TokenStoreTest, Uint16HoldsAVocabularyOfExactly65536) {
  round_trip(65536, {make_beats("x", 300, 65536, 9)});
}

TEST_F(TokenStoreTest, KeepsEmptyRecordsAndEmptyStores) {
  round_trip(64,
             {make_beats("a", 0, 64, 0), make_beats("b", 10, 64, 1), make_beats("c", 0, 64, 2)});
  round_trip(64, {});
}

TEST_F(TokenStoreTest, OrdersRecordsByNameWhateverTheAppendOrder) {
  const std::string path = file("tokens.bin");
  TokenStoreWriter writer(path, 100, "id");
  for (const char* name : {"203", "100", "119"}) writer.append(make_beats(name, 5, 100, 1));
  writer.finish();
  const TokenStore s = TokenStore::open(path);
  ASSERT_EQ(s.record_count(), 3u);
  EXPECT_EQ(s.record(0).name, "100");
  EXPECT_EQ(s.record(1).name, "119");
  EXPECT_EQ(s.record(2).name, "203");
  EXPECT_EQ(s.find_record("119"), 1u);
  EXPECT_EQ(s.find_record("999"), s.record_count());
}

TEST_F(TokenStoreTest, StoresMissingLabelsAsNone) {
  Beats b = make_beats("a", 4, 10, 0);
  b.labels.clear();
  TokenStoreWriter writer(file("t.bin"), 10, "id");
  writer.append(b);
  writer.finish();
  const TokenStore s = TokenStore::open(file("t.bin"));
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(s.labels()[i], static_cast<uint8_t>(hlm::BeatClass::kNone));
}

TEST_F(TokenStoreTest, CopyWindowWidensToInt64AndChecksBounds) {
  const std::string path = file("tokens.bin");
  TokenStoreWriter writer(path, 1000, "id");
  const Beats b = make_beats("r", 50, 1000, 5);
  writer.append(b);
  writer.finish();
  const TokenStore s = TokenStore::open(path);
  std::vector<int64_t> window(8, -1);
  s.copy_window(42, 8, window.data());
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(window[i], static_cast<int64_t>(b.tokens[42 + i]));
  EXPECT_THROW(s.copy_window(43, 8, window.data()), hlm::InternalError);
  EXPECT_NO_THROW(s.copy_window(50, 0, window.data()));
}

TEST_F(TokenStoreTest, ConcurrentAppendsAreAllStored) {
  const std::string path = file("tokens.bin");
  TokenStoreWriter writer(path, 300, "id");
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (int r = 0; r < 25; ++r)
        writer.append(make_beats("rec" + std::to_string(t * 100 + r), 40 + r, 300, t));
    });
  for (auto& w : workers) w.join();
  writer.finish();
  const TokenStore s = TokenStore::open(path);
  EXPECT_EQ(s.record_count(), 100u);
  EXPECT_EQ(s.token_count(), 4u * (25u * 40u + 300u));
}

TEST_F(TokenStoreTest, FinishIsAtomicSoNoStoreExistsBeforeIt) {
  const std::string path = file("tokens.bin");
  {
    TokenStoreWriter writer(path, 100, "id");
    writer.append(make_beats("a", 10, 100, 1));
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(fs::exists(path + ".tmp"));
    writer.finish();
    EXPECT_TRUE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
    EXPECT_FALSE(fs::exists(path + ".part"));
    EXPECT_THROW(writer.append(make_beats("b", 1, 100, 1)), hlm::InternalError);
  }
  {
    // A writer dropped without finish() (a crash) leaves no store behind.
    TokenStoreWriter writer(file("other.bin"), 100, "id");
    writer.append(make_beats("a", 10, 100, 1));
  }
  EXPECT_FALSE(fs::exists(file("other.bin")));
  EXPECT_THROW(TokenStore::open(file("other.bin")), hlm::DataError);
}

namespace {

// Record b with k descriptors per beat, each naming its beat and column.
Beats with_descriptors(Beats b, uint32_t k) {
  for (size_t i = 0; i < b.size(); ++i)
    for (uint32_t j = 0; j < k; ++j) b.descriptors.push_back(float(i) + 0.25f * float(j));
  return b;
}

void expect_descriptors(const TokenStore& s, const std::string& record, uint32_t k) {
  const auto v = s.record(s.find_record(record));
  for (size_t i = 0; i < v.length; ++i)
    for (uint32_t j = 0; j < k; ++j)
      ASSERT_EQ(s.descriptors()[(v.offset + i) * k + j], float(i) + 0.25f * float(j))
          << record << " beat " << i << " descriptor " << j;
}

}  // namespace

TEST_F(TokenStoreTest, KeepsEachBeatsDescriptorsAcrossAResume) {
  const std::string path = file("tokens.bin");
  {
    // Interrupted after one record: its descriptors wait in the `.tmp`.
    TokenStoreWriter writer(path, 100, "id", /*resume=*/true, 3);
    writer.append(with_descriptors(make_beats("b", 7, 100, 2), 3));
  }
  {
    // Another descriptor count cannot reuse that log.
    TokenStoreWriter other(file("other.bin"), 100, "id", true, 2);
    EXPECT_FALSE(other.has_record("b"));
  }
  TokenStoreWriter writer(path, 100, "id", /*resume=*/true, 3);
  EXPECT_TRUE(writer.has_record("b"));
  writer.append(with_descriptors(make_beats("a", 5, 100, 1), 3));
  writer.finish();
  const TokenStore s = TokenStore::open(path);
  ASSERT_EQ(s.descriptor_count(), 3u);
  expect_descriptors(s, "a", 3);
  expect_descriptors(s, "b", 3);
  // The other arrays are where they were without descriptors.
  EXPECT_EQ(s.positions()[s.record(1).offset], make_beats("b", 7, 100, 2).positions[0]);
  EXPECT_EQ(s.labels()[4], make_beats("a", 5, 100, 1).labels[4]);
}

TEST_F(TokenStoreTest, RefusesARecordWithTheWrongNumberOfDescriptors) {
  TokenStoreWriter writer(file("tokens.bin"), 100, "id", true, 3);
  try {
    writer.append(with_descriptors(make_beats("rec7", 4, 100, 1), 2));
    FAIL() << "expected DataError";
  } catch (const hlm::DataError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rec7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("8 descriptor values for 4 beats"), std::string::npos) << msg;
  }
  TokenStoreWriter none(file("none.bin"), 100, "id");
  EXPECT_THROW(none.append(with_descriptors(make_beats("a", 4, 100, 1), 1)), hlm::DataError);
}

TEST_F(TokenStoreTest, ReadsVersionOneStoresWhichHaveNoDescriptors) {
  const std::string path = file("tokens.bin");
  TokenStoreWriter writer(path, 100, "id");
  writer.append(make_beats("a", 9, 100, 1));
  writer.finish();
  // Rewrites the version field (and so the header checksum) as an older hlm wrote it.
  auto rewrite = [&](uint32_t version, uint32_t descriptor_count) {
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    uint32_t header_bytes = 0;
    std::memcpy(&header_bytes, &bytes[12], 4);
    std::memcpy(&bytes[8], &version, 4);
    std::memcpy(&bytes[108], &descriptor_count, 4);  // after identity_bytes
    std::memset(&bytes[120], 0, 8);
    const uint64_t sum = hlm::fnv1a64(bytes.data(), header_bytes);
    std::memcpy(&bytes[120], &sum, 8);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  rewrite(1, 0);
  const TokenStore s = TokenStore::open(path);
  EXPECT_EQ(s.descriptor_count(), 0u);
  EXPECT_EQ(s.descriptors(), nullptr);
  EXPECT_EQ(s.token(3), make_beats("a", 9, 100, 1).tokens[3]);
  // Version 1 had no descriptors: a count there is corruption.
  rewrite(1, 2);
  EXPECT_THROW(TokenStore::open(path), hlm::DataError);
}
