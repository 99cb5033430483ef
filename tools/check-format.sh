#!/usr/bin/env bash
# Fails, listing the files, when a tracked C++ source differs from what clang-format makes of
# it with the project's .clang-format. `cmake --build build --target format` fixes them.
# tools/plugin-template/ is left out: its @NAME@ placeholders are not C++ until new-plugin.sh
# fills them in (clang-format would split them).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format missing: bash tools/setup.sh deps" >&2; exit 2; }
unformatted=()
while IFS= read -r file; do
  clang-format --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done < <(git ls-files '*.cpp' '*.h' ':!tools/plugin-template/*')
if ((${#unformatted[@]})); then
  echo "not formatted with .clang-format (${#unformatted[@]} files):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "fix: cmake --build build --target format" >&2
  exit 1
fi
echo "format: every C++ source follows .clang-format"
