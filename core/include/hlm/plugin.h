// The plugin ABI: one extern "C" entry point per plugin library, made by HLM_PLUGIN, returns a
// plain descriptor. The host checks abi_major and the build fingerprint before calling anything
// else, so the C++ objects a plugin creates may be used through the interfaces of this SDK.
// ABI 1.1 appended sdk_version; the host reads a 1.0 descriptor too (see struct_size).
#pragma once
#include <cstddef>
#include <cstdint>

#define HLM_PLUGIN_ABI_MAJOR 1
#define HLM_PLUGIN_ABI_MINOR 1
#define HLM_PLUGIN_ENTRY_SYMBOL "hlm_plugin_entry"

// Values a plugin and the host must agree on; a mismatch means C++ objects cannot cross: the
// LibTorch and C++ ABI behind the interfaces, nlohmann::json (create() receives one) and this
// SDK's own version (the interfaces themselves).
#include <nlohmann/json.hpp>
#ifndef HLM_TORCH_VERSION
#define HLM_TORCH_VERSION "none"
#endif
#ifndef HLM_VERSION
#define HLM_VERSION "unknown"
#endif
#ifndef HLM_WITH_CUDA
#define HLM_WITH_CUDA 0
#endif
#ifndef HLM_CUDA_VERSION
#define HLM_CUDA_VERSION "none"
#endif
#define HLM_STRINGIFY_(x) #x
#define HLM_STRINGIFY(x) HLM_STRINGIFY_(x)
#define HLM_BUILD_FINGERPRINT \
  "torch=" HLM_TORCH_VERSION " cuda=" HLM_CUDA_VERSION " cxx11abi="               \
  HLM_STRINGIFY(_GLIBCXX_USE_CXX11_ABI) " gcc=" HLM_STRINGIFY(__GNUC__) " json="   \
  HLM_STRINGIFY(NLOHMANN_JSON_VERSION_MAJOR) "." HLM_STRINGIFY(NLOHMANN_JSON_VERSION_MINOR) \
  " sdk=" HLM_VERSION

extern "C" {

// One declared parameter. type is "int", "float", "bool", "string", "list" (of strings or
// numbers) or "plugin:<kind>" (a nested block naming a plugin and its own parameters).
// default_json is the default as JSON text; nullptr makes the parameter required.
typedef struct hlm_param_decl {
  const char* name;
  const char* type;
  const char* default_json;
  const char* help;
} hlm_param_decl;

// Returned by the entry point. Fields may only be appended (struct_size tells the host how
// many are present; abi_minor counts the appends), so an older plugin of the same abi_major
// still loads: the host copies the fields it was given into a zeroed descriptor of its own.
// kind, name, fingerprint, create and destroy must be set; the others may be null.
typedef struct hlm_plugin_descriptor {
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t struct_size;
  const char* kind;  // "dataset", "tokenizer", "model" or "backend"
  const char* name;
  const char* version;
  const char* fingerprint;
  const char* description;
  const hlm_param_decl* params;
  uint32_t param_count;
  // Makes an object of the kind's interface (hlm::Dataset, ...). params points at an
  // nlohmann::json object already validated against the declarations, defaults filled in.
  // Returns 0 on success; otherwise writes a message to error and returns non-zero.
  int (*create)(const void* params, void** object, char* error, size_t error_size);
  void (*destroy)(void* object);
  // ABI 1.1: the hlm version whose SDK headers built the plugin (null from a 1.0 plugin).
  const char* sdk_version;
} hlm_plugin_descriptor;

typedef const hlm_plugin_descriptor* (*hlm_plugin_entry_fn)(void);
}

#if defined(__GNUC__)
#define HLM_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define HLM_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
#include <cstdio>
#include <exception>

namespace hlm::detail {
// Runs a factory and turns any exception into status + message: nothing is thrown across C.
template <class Interface, class Factory>
int create_object(Factory factory, const void* params, void** object, char* error,
                  size_t error_size) {
  try {
    Interface* made = factory(*static_cast<const nlohmann::json*>(params));
    *object = made;
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_size, "unknown error");
  }
  return 1;
}
}  // namespace hlm::detail

// HLM_PLUGIN(Interface, name, version, description, params, factory)
//   Interface: hlm::Dataset, hlm::Tokenizer, hlm::Model or hlm::Backend; the plugin's kind
//              ("dataset", ...) is the interface's kPluginKind, so the two cannot disagree
//   params:    a static array of hlm_param_decl
//   factory:   Interface* (const nlohmann::json& params), may throw
#ifndef HLM_PLUGIN_ABI_MAJOR_BUILT
#define HLM_PLUGIN_ABI_MAJOR_BUILT HLM_PLUGIN_ABI_MAJOR
#endif
#define HLM_PLUGIN(Interface, name_, version_, description_, params_, factory_)      \
  extern "C" HLM_PLUGIN_EXPORT const hlm_plugin_descriptor* hlm_plugin_entry(void) { \
    static const hlm_plugin_descriptor descriptor = {                                \
        HLM_PLUGIN_ABI_MAJOR_BUILT,                                                  \
        HLM_PLUGIN_ABI_MINOR,                                                        \
        sizeof(hlm_plugin_descriptor),                                               \
        Interface::kPluginKind,                                                      \
        name_,                                                                       \
        version_,                                                                    \
        HLM_BUILD_FINGERPRINT,                                                       \
        description_,                                                                \
        params_,                                                                     \
        sizeof(params_) / sizeof(params_[0]),                                        \
        [](const void* p, void** o, char* e, size_t n) {                             \
          return hlm::detail::create_object<Interface>(factory_, p, o, e, n);        \
        },                                                                           \
        [](void* o) { delete static_cast<Interface*>(o); },                          \
        HLM_VERSION};                                                                \
    return &descriptor;                                                              \
  }
#endif
