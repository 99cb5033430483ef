# HLM_SANITIZE builds every target with GCC's or Clang's sanitizers, for the presets in
# CMakePresets.json:
#   address,undefined  out-of-bounds and use-after-free accesses, leaks, undefined behaviour
#   thread             data races
# Each finding stops the test that caused it (-fno-sanitize-recover), so ctest reports it as a
# failure. LibTorch, OpenBLAS and the other Debian libraries are not instrumented: ThreadSanitizer
# is meant for the code that needs no LibTorch (the unit tier's hlm_unit_tests, see CI) and for
# the shm backend, whose own code is instrumented (hlm_shm_sanitized_tests).
set(HLM_SANITIZE "" CACHE STRING "Sanitizers to build with: address,undefined or thread (empty: none)")
if(HLM_SANITIZE)
  if(NOT HLM_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
    message(FATAL_ERROR "HLM_SANITIZE='${HLM_SANITIZE}': use address,undefined or thread")
  endif()
  # -O1 after the build type's -O2 (the last one counts): the sanitizers' own advice for
  # usable speed, and it compiles the sanitizer builds in about 60 % of the time of -O2.
  add_compile_options(-fsanitize=${HLM_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g -O1)
  add_link_options(-fsanitize=${HLM_SANITIZE})
endif()

# HLM_FUZZ builds the libFuzzer targets of tests/fuzz (Clang only, with HLM_SANITIZE set to
# address,undefined by the `fuzz` preset); every target is compiled with libFuzzer's coverage
# instrumentation so the fuzzer sees which branches of hlm's readers an input reaches.
option(HLM_FUZZ "Build the libFuzzer targets (needs Clang)" OFF)
if(HLM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HLM_FUZZ needs Clang (CMAKE_CXX_COMPILER=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
