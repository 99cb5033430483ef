// Dataset plugins: a named collection of ECG records (a WFDB directory, a generator, ...).
#pragma once
#include <string>
#include <vector>

#include "hlm/ecg.h"
#include "hlm/plugin.h"

namespace hlm {

class Dataset {
 public:
  static constexpr const char* kPluginKind = "dataset";  // HLM_PLUGIN's descriptor kind
  virtual ~Dataset() = default;
  // Record names in a stable order.
  virtual std::vector<std::string> records() const = 0;
  // Reads one record with its reference annotations. Thread-safe. Throws DataError naming
  // the record and the problem.
  virtual Record read(const std::string& record) const = 0;
  // A short text that changes whenever the data would (paths, sizes, generator seed): part
  // of the tokenize stage's cache key.
  virtual std::string fingerprint() const = 0;
};

}  // namespace hlm
