// A minimal dataset plugin for plugin-host tests. Compile definitions make variants:
// TINY_BAD_FINGERPRINT pretends another LibTorch and C++ ABI; HLM_PLUGIN_ABI_MAJOR_BUILT=99
// pretends a future plugin ABI; TINY_ABI_1_0 hands out the shorter descriptor of ABI 1.0
// (before sdk_version was appended), as a plugin built with that SDK does; TINY_NO_ENTRY
// leaves out the entry point; TINY_NULL_CREATE hands out the ABI 1.0 descriptor with no create
// function.
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
  if (records < 0)
    throw std::invalid_argument("records must be >= 0, got " + std::to_string(records));
  return new TinyDataset(records);
}

}  // namespace

#if defined(TINY_ABI_1_0) || defined(TINY_NULL_CREATE)
namespace {
// hlm_plugin_descriptor as ABI 1.0 laid it out.
struct DescriptorAbi10 {
  uint32_t abi_major, abi_minor, struct_size;
  const char *kind, *name, *version, *fingerprint, *description;
  const hlm_param_decl* params;
  uint32_t param_count;
  int (*create)(const void* params, void** object, char* error, size_t error_size);
  void (*destroy)(void* object);
};
#ifdef TINY_NULL_CREATE
constexpr auto kCreate = nullptr;
#else
int kCreate(const void* p, void** o, char* e, size_t n) {
  return hlm::detail::create_object<hlm::Dataset>(make_tiny, p, o, e, n);
}
#endif
}  // namespace

extern "C" HLM_PLUGIN_EXPORT const hlm_plugin_descriptor* hlm_plugin_entry(void) {
  static const DescriptorAbi10 descriptor = {1,
                                             0,
                                             sizeof(DescriptorAbi10),
                                             "dataset",
                                             "tiny",
                                             "0.0.9",
                                             HLM_BUILD_FINGERPRINT,
                                             "an ABI 1.0 plugin",
                                             kParams,
                                             1,
                                             kCreate,
                                             [](void* o) { delete static_cast<hlm::Dataset*>(o); }};
  return reinterpret_cast<const hlm_plugin_descriptor*>(&descriptor);
}
#elif defined(TINY_NO_ENTRY)
// The same code without the HLM_PLUGIN line: a shared library, but not an hlm plugin.
extern "C" HLM_PLUGIN_EXPORT hlm::Dataset* tiny_without_entry(const nlohmann::json& p) {
  return p.is_null() ? nullptr : make_tiny(p);
}
extern "C" HLM_PLUGIN_EXPORT const hlm_param_decl* tiny_without_entry_params() { return kParams; }
#else
HLM_PLUGIN(hlm::Dataset, "tiny", "0.1.0", "empty records for tests", kParams, make_tiny)
#endif
