// k-means++ seeding and Lloyd iterations on a seeded random sample (see hlm/dsp/kmeans.h).
// Iterations skip rows whose code cannot have changed (Hamerly's bounds, J. Hamerly, SDM 2010),
// so later iterations cost a fraction of a full assignment.
#include "hlm/dsp/kmeans.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "dsp/kmeans_kernels.h"
#include "dsp/parallel.h"
#include "hlm/errors.h"
#include "hlm/util.h"

namespace hlm::dsp {

namespace {
using kmeans::squared_distance;

// Uniform in [0, 1) from 53 random bits: std::uniform_real_distribution differs between
// standard libraries, and the codebook must not.
double unit(std::mt19937_64& rng) { return double(rng() >> 11) * (1.0 / 9007199254740992.0); }

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

// Lloyd's update: each code moves to the mean of its rows. An empty code moves to the row worst
// served (farthest from its code, ties to the lower row), as scikit-learn does.
void update_codes(const std::vector<float>& x, size_t n, int dim, const std::vector<uint32_t>& code,
                  Codebook& cb) {
  const int k = cb.codes();
  std::vector<double> sums(size_t(k) * dim, 0.0);
  std::vector<int64_t> counts(k, 0);
  for (size_t i = 0; i < n; ++i) {
    double* s = &sums[size_t(code[i]) * dim];
    for (int d = 0; d < dim; ++d) s[d] += x[i * dim + d];
    ++counts[code[i]];
  }
  std::vector<size_t> far;  // candidate rows, the farthest last
  bool far_ready = false;
  for (int c = 0; c < k; ++c) {
    if (counts[c] > 0) {
      for (int d = 0; d < dim; ++d)
        cb.centroids[size_t(c) * dim + d] = float(sums[size_t(c) * dim + d] / counts[c]);
      continue;
    }
    if (!far_ready) {
      far_ready = true;
      std::vector<float> dist(n);
      for (size_t i = 0; i < n; ++i)
        dist[i] = squared_distance(&x[i * dim], &cb.centroids[size_t(code[i]) * dim], dim);
      far.resize(n);
      std::iota(far.begin(), far.end(), size_t{0});
      const size_t keep = std::min<size_t>(n, size_t(k));
      std::partial_sort(far.begin(), far.begin() + keep, far.end(), [&](size_t a, size_t b) {
        return dist[a] > dist[b] || (dist[a] == dist[b] && a < b);
      });
      far.resize(keep);
      std::reverse(far.begin(), far.end());
      while (!far.empty() && dist[far.front()] <= 0.0f) far.erase(far.begin());
    }
    if (!far.empty()) {
      std::memcpy(&cb.centroids[size_t(c) * dim], &x[far.back() * dim], sizeof(float) * dim);
      far.pop_back();
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
    throw ConfigError(
        "kmeans: rows={} dim={} codes={} sample_size={} max_iterations={} (need at least one row, "
        "dim, code and sample row)",
        rows, dim, options.codes, options.sample_size, options.max_iterations);
  std::mt19937_64 rng(options.seed);
  const std::vector<size_t> pick = draw_sample(rows, options.sample_size, rng);
  const size_t n = pick.size();
  std::vector<float> x(n * dim);
  std::vector<const float*> row(n);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&x[i * dim], data[pick[i]], sizeof(float) * dim);
    row[i] = &x[i * dim];
  }
  Codebook cb;
  cb.dim = dim;
  const int k = options.codes;
  seed_codes(x, n, dim, k, options.threads, rng, cb.centroids);

  // Hamerly's bounds per row: upper >= distance to its code, lower <= distance to any other.
  std::vector<uint32_t> code(n);
  std::vector<float> upper(n), lower(n), d1(n), d2(n);
  kmeans::nearest_two(kmeans::pack(cb), row.data(), n, code.data(), d1.data(), d2.data(),
                      options.threads);
  for (size_t i = 0; i < n; ++i) upper[i] = std::sqrt(d1[i]), lower[i] = std::sqrt(d2[i]);
  std::vector<float> old(cb.centroids.size()), drift(k), half_gap(k);
  std::vector<size_t> redo;
  std::vector<uint32_t> redo_code;
  std::vector<const float*> redo_row;
  int iterations = 0;
  for (; iterations < options.max_iterations; ++iterations) {
    if (iterations > 0) {
      // Half the distance from each code to its nearest other code: a row closer than that
      // to its code keeps it. (Each code's nearest is itself; the second is the other.)
      std::vector<const float*> code_row(k);
      for (int c = 0; c < k; ++c) code_row[c] = &cb.centroids[size_t(c) * dim];
      std::vector<uint32_t> self(k);
      std::vector<float> zero(k), gap(k);
      kmeans::nearest_two(kmeans::pack(cb), code_row.data(), k, self.data(), zero.data(),
                          gap.data(), 1);
      for (int c = 0; c < k; ++c) half_gap[c] = 0.5f * std::sqrt(gap[c]);
      // The margin keeps the test on the safe side of rounding in the distances.
      std::vector<char> again(n, 0);
      parallel_chunks(n, 4096, options.threads, [&](size_t a, size_t b) {
        for (size_t i = a; i < b; ++i) {
          const float bound = std::max(lower[i], half_gap[code[i]]) * (1.0f - 1e-5f);
          if (upper[i] <= bound) continue;
          upper[i] = std::sqrt(squared_distance(row[i], &cb.centroids[size_t(code[i]) * dim], dim));
          again[i] = upper[i] > bound;
        }
      });
      redo.clear();
      for (size_t i = 0; i < n; ++i)
        if (again[i]) redo.push_back(i);
      redo_row.resize(redo.size());
      redo_code.resize(redo.size());
      d1.resize(redo.size());
      d2.resize(redo.size());
      for (size_t j = 0; j < redo.size(); ++j) redo_row[j] = row[redo[j]];
      kmeans::nearest_two(kmeans::pack(cb), redo_row.data(), redo.size(), redo_code.data(),
                          d1.data(), d2.data(), options.threads);
      size_t changed = 0;
      for (size_t j = 0; j < redo.size(); ++j) {
        const size_t i = redo[j];
        changed += redo_code[j] != code[i];
        code[i] = redo_code[j];
        upper[i] = std::sqrt(d1[j]);
        lower[i] = std::sqrt(d2[j]);
      }
      if (changed == 0) break;
    }
    old = cb.centroids;
    update_codes(x, n, dim, code, cb);
    // Bounds follow the codes: a row's code moved by its drift, any other by at most the
    // largest drift of the others.
    int far1 = 0;
    for (int c = 0; c < k; ++c) {
      drift[c] =
          std::sqrt(squared_distance(&old[size_t(c) * dim], &cb.centroids[size_t(c) * dim], dim));
      if (drift[c] > drift[far1]) far1 = c;
    }
    float second_drift = 0.0f;
    for (int c = 0; c < k; ++c)
      if (c != far1) second_drift = std::max(second_drift, drift[c]);
    for (size_t i = 0; i < n; ++i) {
      upper[i] += drift[code[i]];
      lower[i] -= int(code[i]) == far1 ? second_drift : drift[far1];
    }
  }
  if (report) {
    d1.resize(n);
    kmeans::nearest_two(kmeans::pack(cb), row.data(), n, code.data(), d1.data(), nullptr,
                        options.threads);
    report->rows_used = static_cast<int64_t>(n);
    report->iterations = iterations;
    report->inertia = 0.0;
    for (size_t i = 0; i < n; ++i) report->inertia += d1[i];
  }
  return cb;
}

uint64_t codebook_hash(const Codebook& codebook) {
  const uint32_t dim = static_cast<uint32_t>(codebook.dim);
  uint64_t h = fnv1a64(&dim, sizeof(dim));
  return fnv1a64(codebook.centroids.data(), codebook.centroids.size() * sizeof(float), h);
}

}  // namespace hlm::dsp
