// k-means codebooks: clustering quality, determinism, fast assignment, codebook files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "hlm/dsp/kmeans.h"
#include "hlm/errors.h"

namespace {
// `per` points around each of `k` centres in `dim` dimensions, centres 10 apart, noise 0.1.
std::vector<float> blobs(int k, int per, int dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  std::vector<float> x;
  for (int p = 0; p < per; ++p)
    for (int c = 0; c < k; ++c)
      for (int d = 0; d < dim; ++d)
        x.push_back((d == c % dim ? 10.0f * (1 + c / dim) : 0.0f) + noise(rng));
  return x;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hlm_dsp_" + name)).string();
}

// A codebook of `codes` standard-normal codes and `rows` standard-normal rows, drawn in that
// order from one generator.
struct RandomCodesAndRows {
  hlm::dsp::Codebook cb;
  std::vector<float> x;
};
RandomCodesAndRows random_codes_and_rows(int dim, int codes, int rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  RandomCodesAndRows r;
  r.cb.dim = dim;
  for (int i = 0; i < codes * dim; ++i) r.cb.centroids.push_back(g(rng));
  r.x.resize(size_t(rows) * dim);
  for (float& v : r.x) v = g(rng);
  return r;
}
}  // namespace

TEST(Kmeans, FindsWellSeparatedClusters) {
  const int k = 8, per = 200, dim = 16;
  const std::vector<float> x = blobs(k, per, dim, 1);
  hlm::dsp::KmeansOptions o;
  o.codes = k;
  hlm::dsp::KmeansReport report;
  const auto cb = hlm::dsp::kmeans_fit(x.data(), x.size() / dim, dim, o, &report);
  ASSERT_EQ(cb.codes(), k);
  EXPECT_EQ(report.rows_used, k * per);
  EXPECT_LT(report.inertia / (k * per), 2.0 * dim * 0.01);  // about the noise variance per row
}

TEST(Kmeans, IsDeterministicForAFixedSeedAndAnyThreadCount) {
  const int dim = 64;
  const std::vector<float> x = blobs(40, 50, dim, 2);
  hlm::dsp::KmeansOptions o;
  o.codes = 50;
  o.sample_size = 1500;  // a real sample: 2000 rows
  o.seed = 42;
  const auto a = hlm::dsp::kmeans_fit(x.data(), x.size() / dim, dim, o);
  o.threads = 3;
  const auto b = hlm::dsp::kmeans_fit(x.data(), x.size() / dim, dim, o);
  EXPECT_EQ(a.centroids, b.centroids);
  o.seed = 43;
  const auto c = hlm::dsp::kmeans_fit(x.data(), x.size() / dim, dim, o);
  EXPECT_NE(a.centroids, c.centroids);
}

TEST(Kmeans, AssignNearestMatchesBruteForce) {
  const int dim = 64, codes = 37, rows = 301;  // sizes that leave partial tiles
  const auto [cb, x] = random_codes_and_rows(dim, codes, rows, 3);
  std::vector<uint32_t> idx(rows);
  std::vector<float> d2(rows);
  hlm::dsp::assign_nearest(cb, x.data(), rows, idx.data(), d2.data(), 2);
  for (int r = 0; r < rows; ++r) {
    int best = 0;
    double best_d = 1e300;
    for (int c = 0; c < codes; ++c) {
      double d = 0;
      for (int j = 0; j < dim; ++j)
        d += double(x[r * dim + j] - cb.centroids[c * dim + j]) *
             (x[r * dim + j] - cb.centroids[c * dim + j]);
      if (d < best_d) best_d = d, best = c;
    }
    ASSERT_EQ(int(idx[r]), best) << "row " << r;
    ASSERT_NEAR(d2[r], best_d, 1e-3 * best_d) << "row " << r;
  }
}

// A codebook packed once (as beat-vq packs it per codebook) assigns batch after batch as
// assign_nearest does; a copy shares the packed codes and an empty one assigns nothing.
TEST(Kmeans, APackedCodebookAssignsEveryBatchAsAssignNearest) {
  const int dim = 40, codes = 21, rows = 97;
  const auto [cb, x] = random_codes_and_rows(dim, codes, rows, 5);
  std::vector<uint32_t> whole(rows), batched(rows, 9999);
  hlm::dsp::assign_nearest(cb, x.data(), rows, whole.data());
  const hlm::dsp::PackedCodebook packed(cb);
  const hlm::dsp::PackedCodebook copy = packed;
  for (int from = 0; from < rows; from += 30)
    copy.assign(x.data() + size_t(from) * dim, size_t(std::min(30, rows - from)),
                batched.data() + from);
  EXPECT_EQ(batched, whole);
  const hlm::dsp::PackedCodebook none;
  EXPECT_TRUE(none.empty());
  none.assign(x.data(), rows, batched.data());
  EXPECT_EQ(batched, whole);  // untouched
}

TEST(Kmeans, ConvergesToAFixedPointOfLloydDespiteSkippingRows) {
  // Unstructured data takes many iterations, so the bounds that skip rows are exercised.
  const int dim = 8, rows = 3000, codes = 30;
  std::mt19937 rng(9);
  std::normal_distribution<float> g;
  std::vector<float> x(size_t(rows) * dim);
  for (float& v : x) v = g(rng);
  hlm::dsp::KmeansOptions o;
  o.codes = codes;
  o.max_iterations = 300;
  hlm::dsp::KmeansReport report;
  const auto cb = hlm::dsp::kmeans_fit(x.data(), rows, dim, o, &report);
  ASSERT_LT(report.iterations, 300) << "did not converge";
  EXPECT_GT(report.iterations, 5);
  // One more full Lloyd step by brute force leaves every code where it is.
  std::vector<uint32_t> idx(rows);
  hlm::dsp::assign_nearest(cb, x.data(), rows, idx.data());
  std::vector<double> sum(size_t(codes) * dim, 0.0);
  std::vector<int> count(codes, 0);
  for (int r = 0; r < rows; ++r) {
    ++count[idx[r]];
    for (int d = 0; d < dim; ++d) sum[idx[r] * dim + d] += x[size_t(r) * dim + d];
  }
  for (int c = 0; c < codes; ++c) {
    ASSERT_GT(count[c], 0) << "code " << c;
    for (int d = 0; d < dim; ++d)
      EXPECT_NEAR(sum[size_t(c) * dim + d] / count[c], cb.centroids[size_t(c) * dim + d], 1e-4)
          << "code " << c;
  }
}

TEST(Kmeans, KeepsWorkingWithMoreCodesThanRows) {
  const std::vector<float> x = {0, 0, 1, 1, 5, 5};
  hlm::dsp::KmeansOptions o;
  o.codes = 5;
  const auto cb = hlm::dsp::kmeans_fit(x.data(), 3, 2, o);
  EXPECT_EQ(cb.codes(), 5);
  std::vector<uint32_t> idx(3);
  std::vector<float> d2(3);
  hlm::dsp::assign_nearest(cb, x.data(), 3, idx.data(), d2.data());
  for (float d : d2) EXPECT_EQ(d, 0.0f);
}

TEST(Kmeans, CodebookRoundTripsThroughAFileWithItsMetadata) {
  hlm::dsp::Codebook cb;
  cb.dim = 3;
  cb.centroids = {1, 2, 3, 4, 5, 6};
  const std::string path = temp_path("roundtrip.cb");
  hlm::dsp::save_codebook(cb, path, "{\"codes\":2}");
  std::string meta;
  const auto back = hlm::dsp::load_codebook(path, &meta);
  EXPECT_EQ(back.dim, 3);
  EXPECT_EQ(back.centroids, cb.centroids);
  EXPECT_EQ(meta, "{\"codes\":2}");
  EXPECT_EQ(hlm::dsp::codebook_hash(back), hlm::dsp::codebook_hash(cb));
  std::remove(path.c_str());
}

TEST(Kmeans, LoadRejectsACorruptOrForeignFileNamingIt) {
  hlm::dsp::Codebook cb;
  cb.dim = 2;
  cb.centroids = {1, 2};
  const std::string path = temp_path("corrupt.cb");
  hlm::dsp::save_codebook(cb, path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(26);  // inside the centroids
    f.put('\x7f');
  }
  try {
    hlm::dsp::load_codebook(path);
    FAIL() << "a corrupt codebook loaded";
  } catch (const hlm::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  hlm::dsp::save_codebook(cb, path);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);  // truncated
  try {
    hlm::dsp::load_codebook(path);
    FAIL() << "a truncated codebook loaded";
  } catch (const hlm::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::ofstream(path, std::ios::binary) << "not a codebook at all, just text";
  EXPECT_THROW(hlm::dsp::load_codebook(path), hlm::CheckpointError);
  std::remove(path.c_str());
}
