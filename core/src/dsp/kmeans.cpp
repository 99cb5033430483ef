// k-means++ seeding and Lloyd iterations on a seeded random sample (see hlm/dsp/kmeans.h).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "dsp/parallel.h"
#include "hlm/dsp/kmeans.h"
#include "hlm/errors.h"
#include "hlm/util.h"

namespace hlm::dsp {

namespace {
// Uniform in [0, 1) from 53 random bits: std::uniform_real_distribution differs between
// standard libraries, and the codebook must not.
double unit(std::mt19937_64& rng) { return double(rng() >> 11) * (1.0 / 9007199254740992.0); }

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HLM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define HLM_VECTOR_CLONES
#endif

// Eight partial sums, so the loop vectorises without reassociating a single float sum.
HLM_VECTOR_CLONES
float squared_distance(const float* __restrict a, const float* __restrict b, int dim) {
  float part[8] = {};
  int d = 0;
  for (; d + 8 <= dim; d += 8)
    for (int k = 0; k < 8; ++k) part[k] += (a[d + k] - b[d + k]) * (a[d + k] - b[d + k]);
  float s = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  for (; d < dim; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
  return s;
}

// Row indices of the sample, in increasing order: all rows, or a partial Fisher-Yates draw.
std::vector<size_t> draw_sample(size_t rows, int64_t want, std::mt19937_64& rng) {
  std::vector<size_t> idx(rows);
  std::iota(idx.begin(), idx.end(), size_t{0});
  if (static_cast<int64_t>(rows) <= want) return idx;
  const size_t s = static_cast<size_t>(want);
  for (size_t i = 0; i < s; ++i) std::swap(idx[i], idx[i + rng() % (rows - i)]);
  idx.resize(s);
  std::sort(idx.begin(), idx.end());
  return idx;
}

// k-means++: each new code is a row drawn with probability proportional to its squared
// distance to the nearest code so far.
void seed_codes(const std::vector<float>& x, size_t n, int dim, int codes, int threads,
                std::mt19937_64& rng, std::vector<float>& c) {
  c.assign(size_t(codes) * dim, 0.0f);
  std::vector<float> nearest(n);
  size_t pick = rng() % n;
  for (int k = 0; k < codes; ++k) {
    std::memcpy(&c[size_t(k) * dim], &x[pick * dim], sizeof(float) * dim);
    const float* ck = &c[size_t(k) * dim];
    parallel_chunks(n, 4096, threads, [&](size_t a, size_t b) {
      for (size_t i = a; i < b; ++i) {
        const float d = squared_distance(&x[i * dim], ck, dim);
        nearest[i] = k == 0 ? d : std::min(nearest[i], d);
      }
    });
    if (k + 1 == codes) break;
    double total = 0.0;
    for (float d : nearest) total += d;
    if (total <= 0.0) {
      pick = rng() % n;  // every row already is a code: repeat one
      continue;
    }
    const double target = unit(rng) * total;
    double run = 0.0;
    pick = n - 1;
    for (size_t i = 0; i < n; ++i) {
      run += nearest[i];
      if (run > target) {
        pick = i;
        break;
      }
    }
  }
}
}  // namespace

Codebook kmeans_fit(const float* data, size_t rows, int dim, const KmeansOptions& options,
                    KmeansReport* report) {
  std::vector<const float*> ptr(rows);
  for (size_t i = 0; i < rows; ++i) ptr[i] = data + i * size_t(std::max(dim, 0));
  return kmeans_fit(ptr, dim, options, report);
}

Codebook kmeans_fit(const std::vector<const float*>& data, int dim, const KmeansOptions& options,
                    KmeansReport* report) {
  const size_t rows = data.size();
  if (dim <= 0 || rows == 0 || options.codes <= 0 || options.sample_size <= 0 ||
      options.max_iterations < 0)
    throw ConfigError("kmeans: rows=" + std::to_string(rows) + " dim=" + std::to_string(dim) +
                      " codes=" + std::to_string(options.codes) +
                      " sample_size=" + std::to_string(options.sample_size) +
                      " max_iterations=" + std::to_string(options.max_iterations) +
                      " (need at least one row, dim, code and sample row)");
  std::mt19937_64 rng(options.seed);
  const std::vector<size_t> pick = draw_sample(rows, options.sample_size, rng);
  const size_t n = pick.size();
  std::vector<float> x(n * dim);
  for (size_t i = 0; i < n; ++i)
    std::memcpy(&x[i * dim], data[pick[i]], sizeof(float) * dim);

  Codebook cb;
  cb.dim = dim;
  seed_codes(x, n, dim, options.codes, options.threads, rng, cb.centroids);

  std::vector<uint32_t> code(n), previous(n, UINT32_MAX);
  std::vector<float> dist(n);
  std::vector<double> sums(size_t(options.codes) * dim);
  std::vector<int64_t> counts(options.codes);
  int iterations = 0;
  for (; iterations < options.max_iterations; ++iterations) {
    assign_nearest(cb, x.data(), n, code.data(), dist.data(), options.threads);
    if (code == previous) break;
    previous = code;
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(counts.begin(), counts.end(), 0);
    for (size_t i = 0; i < n; ++i) {
      double* s = &sums[size_t(code[i]) * dim];
      for (int d = 0; d < dim; ++d) s[d] += x[i * dim + d];
      ++counts[code[i]];
    }
    // An empty code moves to the row worst served, farthest first (as scikit-learn does).
    std::vector<size_t> far;
    for (int k = 0; k < options.codes; ++k) {
      if (counts[k] > 0) {
        for (int d = 0; d < dim; ++d)
          cb.centroids[size_t(k) * dim + d] = float(sums[size_t(k) * dim + d] / counts[k]);
        continue;
      }
      if (far.empty()) {
        far.resize(n);
        std::iota(far.begin(), far.end(), size_t{0});
        std::stable_sort(far.begin(), far.end(), [&](size_t a, size_t b) { return dist[a] > dist[b]; });
        far.resize(std::min<size_t>(n, options.codes));
        std::reverse(far.begin(), far.end());
      }
      if (!far.empty() && dist[far.back()] > 0.0f) {
        std::memcpy(&cb.centroids[size_t(k) * dim], &x[far.back() * dim], sizeof(float) * dim);
        far.pop_back();
      }
    }
  }
  if (report) {
    assign_nearest(cb, x.data(), n, code.data(), dist.data(), options.threads);
    report->rows_used = static_cast<int64_t>(n);
    report->iterations = iterations;
    report->inertia = 0.0;
    for (float d : dist) report->inertia += d;
  }
  return cb;
}

uint64_t codebook_hash(const Codebook& codebook) {
  const uint32_t dim = static_cast<uint32_t>(codebook.dim);
  uint64_t h = fnv1a64(&dim, sizeof(dim));
  return fnv1a64(codebook.centroids.data(), codebook.centroids.size() * sizeof(float), h);
}

}  // namespace hlm::dsp
