#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: Clang with AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each for a bounded time on a copy of its seed corpus,
# then prints one line per target: executions, corpus size, crashes. A crash leaves its input
# as build-fuzz/findings/<target>/crash-*; once fixed, copy it into
# tests/fuzz/regressions/<target>/ so the unit tier replays it in every build.
#   bash tools/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET ...]   (default 30 s, every target)
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-30}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then  # every tests/fuzz/fuzz_<target>.cpp
  for source in tests/fuzz/fuzz_*.cpp; do
    name="${source##*/fuzz_}"
    targets+=("${name%.cpp}")
  done
fi

cmake --preset fuzz >/dev/null || exit 1
cmake --build --preset fuzz -j"$(nproc)" || exit 1

status=0
for t in "${targets[@]}"; do
  work="build-fuzz/findings/$t"
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp tests/fuzz/corpus/"$t"/* "$work/corpus/"
  [[ -d tests/fuzz/regressions/$t ]] && cp tests/fuzz/regressions/"$t"/* "$work/corpus/"
  # One process, the given time, inputs up to 64 KB; findings go to $work.
  (cd "$work" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "../../bin/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix=./ corpus >log.txt 2>&1)
  rc=$?
  execs=$(grep -m1 'stat::number_of_executed_units' "$work/log.txt" | awk '{print $2}')
  crashes=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' -o \
    -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
  printf '%-18s %8s s  %10s executions  %5s corpus  %s findings  (exit %s)\n' "$t" "$seconds" \
    "${execs:-?}" "$(ls "$work/corpus" | wc -l)" "$crashes" "$rc"
  if ((rc != 0 || crashes > 0)); then
    status=1
    grep -m3 -E 'ERROR|runtime error|uncaught|deadly' "$work/log.txt" | sed 's/^/    /'
  fi
done
exit $status
