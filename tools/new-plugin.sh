#!/usr/bin/env bash
# Makes a new dataset plugin project from tools/plugin-template that builds against this hlm.
#   tools/new-plugin.sh NAME DEST_DIR
set -euo pipefail
name="${1:?usage: tools/new-plugin.sh NAME DEST_DIR}"
dest="${2:?usage: tools/new-plugin.sh NAME DEST_DIR}"
[[ "$name" =~ ^[a-z][a-z0-9_]*$ ]] || { echo "NAME must match [a-z][a-z0-9_]*" >&2; exit 2; }
template="$(cd "$(dirname "$0")" && pwd)/plugin-template"
class="$(echo "$name" | sed -E 's/(^|_)([a-z])/\U\2/g')Dataset"
mkdir -p "$dest"
sed "s/@NAME@/$name/g; s/@CLASS@/$class/g" "$template/CMakeLists.txt" > "$dest/CMakeLists.txt"
sed "s/@NAME@/$name/g; s/@CLASS@/$class/g" "$template/dataset.cpp" > "$dest/${name}_dataset.cpp"
echo "created $dest: cmake -S $dest -B $dest/build -Dhlm_DIR=<hlm build dir> && cmake --build $dest/build"
