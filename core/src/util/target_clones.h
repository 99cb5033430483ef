// HLM_TARGET_CLONES("avx512f", "avx2", "default"): the function is compiled once per
// instruction set and an IFUNC resolver picks the best one when the library is loaded.
// Under ThreadSanitizer that resolver runs during relocation, before the sanitizer's runtime
// is set up, and crashes the process before main; those builds get the default version only.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define HLM_TARGET_CLONES(...)
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HLM_TARGET_CLONES(...)
#endif
#endif
#ifndef HLM_TARGET_CLONES
#define HLM_TARGET_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#endif

// A vector loop's clones: x86-64-v4 (AVX-512), v3 (AVX2) and the baseline, where GCC builds
// for x86-64; one version elsewhere.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HLM_VECTOR_CLONES HLM_TARGET_CLONES("arch=x86-64-v4", "arch=x86-64-v3", "default")
#else
#define HLM_VECTOR_CLONES
#endif

// Whether this CPU runs x86-64-v4 (AVX-512) code: for kernels written for it alone
// (`target("arch=x86-64-v4")`) beside a portable one, chosen at run time.
inline bool cpu_has_x86_64_v4() {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
  static const bool wide = (__builtin_cpu_init(), __builtin_cpu_supports("x86-64-v4"));
  return wide;
#else
  return false;
#endif
}
