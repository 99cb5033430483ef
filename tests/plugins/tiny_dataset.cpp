// A minimal dataset plugin for plugin-host tests. Compile definitions make broken variants:
// TINY_BAD_FINGERPRINT pretends another LibTorch and C++ ABI; HLM_PLUGIN_ABI_MAJOR_BUILT=99
// pretends a future plugin ABI.
#include "hlm/dataset.h"

#ifdef TINY_BAD_FINGERPRINT
#undef HLM_BUILD_FINGERPRINT
#define HLM_BUILD_FINGERPRINT "torch=0.0.0 cuda=1 cxx11abi=0 gcc=4"
#endif

namespace {

class TinyDataset : public hlm::Dataset {
 public:
  explicit TinyDataset(int records) : records_(records) {}
  std::vector<std::string> records() const override {
    std::vector<std::string> names;
    for (int i = 0; i < records_; ++i) names.push_back("tiny" + std::to_string(i));
    return names;
  }
  hlm::Record read(const std::string& name) const override {
    hlm::Record r;
    r.name = name;
    return r;
  }
  std::string fingerprint() const override { return "tiny:" + std::to_string(records_); }

 private:
  int records_;
};

const hlm_param_decl kParams[] = {{"records", "int", "2", "number of empty records"}};

hlm::Dataset* make_tiny(const nlohmann::json& p) {
  const int records = p.at("records").get<int>();
  if (records < 0) throw std::invalid_argument("records must be >= 0, got " + std::to_string(records));
  return new TinyDataset(records);
}

}  // namespace

HLM_PLUGIN("dataset", hlm::Dataset, "tiny", "0.1.0", "empty records for tests", kParams, make_tiny)
