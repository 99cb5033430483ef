// k-means codebooks for beat vector quantisation: k-means++ seeding on a random sample,
// Lloyd iterations, fast nearest-code assignment, and a checksummed codebook file.
// Deterministic: the same data, options and seed give the same codebook on a given machine,
// whatever the thread count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hlm::dsp {

struct KmeansOptions {
  int codes = 500;
  int64_t sample_size = 200000;  // k-means runs on at most this many rows, drawn at random
  int max_iterations = 25;       // Lloyd iterations; stops earlier when no row changes code
  uint64_t seed = 0;             // std::mt19937_64 seed for the sample and the seeding
  int threads = 1;               // 0 = one per hardware thread
};

struct Codebook {
  int dim = 0;
  std::vector<float> centroids;  // codes() rows of dim floats
  int codes() const { return dim > 0 ? static_cast<int>(centroids.size() / dim) : 0; }
  bool empty() const { return centroids.empty(); }
};

struct KmeansReport {
  int64_t rows_used = 0;  // size of the sample
  int iterations = 0;     // Lloyd iterations run
  double inertia = 0.0;   // sum of squared distances of the sample to its codes
};

// Fits options.codes centroids to rows of `dim` floats, each given by a pointer (so rows may
// live in many buffers, e.g. one per record). Lloyd iterations skip the rows whose code cannot
// have changed (Hamerly's distance bounds), which gives the same codebook as plain Lloyd up to
// rounding in near ties, in a fraction of the time. An empty code moves to the row farthest from
// its code. With fewer distinct rows than codes, the surplus codes repeat existing rows. Throws
// ConfigError on bad sizes.
Codebook kmeans_fit(const std::vector<const float*>& rows, int dim, const KmeansOptions& options,
                    KmeansReport* report = nullptr);
// The same for `rows` rows stored one after another in data.
Codebook kmeans_fit(const float* data, size_t rows, int dim, const KmeansOptions& options,
                    KmeansReport* report = nullptr);

// Index of the nearest code (squared Euclidean; ties go to the lower index) for each row, and
// optionally the squared distance. Uses ||x||^2 - 2 x.c + ||c||^2 in register-blocked tiles.
void assign_nearest(const Codebook& codebook, const float* data, size_t rows, uint32_t* index,
                    float* distance2 = nullptr, int threads = 1);

namespace kmeans {
struct PackedCodes;
}

// A codebook laid out once for assign_nearest's kernel (tiles of 16 codes), for callers that
// assign batch after batch (a tokenizer, one record at a time) against the same codes.
class PackedCodebook {
 public:
  PackedCodebook() = default;
  explicit PackedCodebook(const Codebook& codebook);
  bool empty() const { return !codes_; }
  // As assign_nearest: `data` holds `rows` rows of the codebook's dim values each.
  void assign(const float* data, size_t rows, uint32_t* index, float* distance2 = nullptr,
              int threads = 1) const;

 private:
  std::shared_ptr<const kmeans::PackedCodes> codes_;
};

// 64-bit hash of the codebook's size and values (part of a tokenizer's identity).
uint64_t codebook_hash(const Codebook& codebook);

// Binary file: magic "HLMCBOOK", format version, dim, codes, a metadata text (e.g. the
// parameters as JSON), the float32 centroids, then an FNV-1a checksum of all that. Written to
// a temporary name and renamed, so a crash never leaves a half file under `path`.
void save_codebook(const Codebook& codebook, const std::string& path,
                   const std::string& metadata = "");
// Throws CheckpointError naming the path and the problem (wrong magic, unknown version,
// truncated, checksum mismatch).
Codebook load_codebook(const std::string& path, std::string* metadata = nullptr);

}  // namespace hlm::dsp
