#!/usr/bin/env bash
# The unit tier's hlm_unit_tests (everything that needs no LibTorch: WFDB I/O, signal
# processing, tokenize workers, the token store, workflows, the /metrics server, the double
# buffer, heartbeats, the stop-signal thread) and the shm backend's tests, built and run under
# a sanitizer preset of CMakePresets.json. A finding fails the test that caused it.
#   bash tools/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)
#   bash tools/sanitize.sh tsan   # ThreadSanitizer (build-tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:?usage: tools/sanitize.sh asan|tsan}"
case "$preset" in asan | tsan) ;; *) echo "unknown preset '$preset' (asan, tsan)" >&2; exit 2 ;; esac

cmake --preset "$preset" -DHLM_WARNINGS_AS_ERRORS="${HLM_WARNINGS_AS_ERRORS:-OFF}" >/dev/null
cmake --build --preset "$preset-unit" -j"$(nproc)"
ctest --preset "$preset-unit"
