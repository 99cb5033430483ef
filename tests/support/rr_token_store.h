// A token store written from RR intervals alone, for tests of what is computed from a record's
// rhythm: one record per list of intervals (the first entry is the first beat's, 0), beats 200
// samples apart at 250 Hz, tokens cycling through 4-10. Removed with the object.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "hlm/token_store.h"

namespace hlm::test {

struct RrTokenStore {
  std::string path;
  std::vector<std::vector<float>> rr;
  // descriptors: values per beat stored beside the tokens, beat i of record r holding
  // descriptor_value(r, i, j).
  RrTokenStore(const std::string& stem, std::vector<std::vector<float>> intervals,
               uint32_t descriptors = 0)
      : path((std::filesystem::temp_directory_path() /
              (stem + "_" + std::to_string(::getpid()) + ".hlmt"))
                 .string()),
        rr(std::move(intervals)) {
    TokenStoreWriter writer(path, 16, "test-tokenizer", /*resume=*/true, descriptors);
    for (size_t r = 0; r < rr.size(); ++r) {
      Beats b;
      b.record = "r" + std::to_string(r);
      b.sampling_hz = 250;
      for (size_t i = 0; i < rr[r].size(); ++i) {
        b.positions.push_back(int64_t(i) * 200);
        b.tokens.push_back(uint32_t(4 + i % 7));
        for (uint32_t j = 0; j < descriptors; ++j)
          b.descriptors.push_back(descriptor_value(r, i, j));
      }
      b.rr_seconds = rr[r];
      writer.append(b);
    }
    writer.finish();
  }
  static float descriptor_value(size_t record, size_t beat, uint32_t j) {
    return float(record * 1000 + beat) + 0.25f * float(j);
  }
  RrTokenStore(const RrTokenStore&) = delete;
  RrTokenStore& operator=(const RrTokenStore&) = delete;
  ~RrTokenStore() { std::filesystem::remove(path); }
};

}  // namespace hlm::test
