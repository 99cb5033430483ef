#!/usr/bin/env bash
# One-command set-up for a fresh Debian 12 machine: installs what is missing from Debian
# packages, puts PyPI's torch (LibTorch with CUDA) into the project's virtual environment
# .venv, builds hlm against it, then either runs the quick start or the whole test suite.
#   bash tools/setup.sh quickstart   # install, build, run workflows/quickstart.yaml
#   bash tools/setup.sh test         # install, build, run ctest (every tier)
#   bash tools/setup.sh build        # install and build only
#   bash tools/setup.sh deps         # install the Debian packages and .venv only
#                                    #  (HLM_PACKAGES=build: only what building needs, as
#                                    #  container images do)
# HLM_BUILD_DIR (default build) names the build folder; HLM_WARNINGS_AS_ERRORS=ON makes
# every compiler warning an error (CI sets it).
set -euo pipefail
cd "$(dirname "$0")/.."

action="${1:-build}"
build_dir="${HLM_BUILD_DIR:-build}"

# What building hlm needs (all an image needs), then what its tests and benchmarks add: the
# Prometheus server, a SLURM controller and nodes, the Python peers, the format check, Clang
# with libFuzzer for the fuzz targets, debootstrap for the container recipe check, and ccache
# (cmake/HlmCompilerCache.cmake).
# HLM_PACKAGES=build installs the first group only.
build_packages=(
  build-essential cmake ninja-build git pkg-config ca-certificates curl python3-venv
  libgloo-dev libyaml-cpp-dev libspdlog-dev libfmt-dev prometheus-cpp-dev nlohmann-json3-dev
  libcli11-dev zlib1g-dev gnuplot-nox libcpp-httplib-dev libxgboost-dev libsamplerate0-dev
)
test_packages=(
  libgtest-dev libgmock-dev clang-format clang libclang-rt-14-dev
  prometheus slurm-client slurmctld slurmd iproute2 debootstrap
  ccache
)
packages=("${build_packages[@]}")
[[ ${HLM_PACKAGES:-all} == build ]] || packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

bash tools/python-env.sh

[[ $action == deps ]] && exit 0

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DHLM_WARNINGS_AS_ERRORS="${HLM_WARNINGS_AS_ERRORS:-OFF}" >/dev/null
# The quick start runs hlm and its plugins only; the tests are built for `test` and `build`.
targets=()
[[ $action == quickstart ]] && targets=(--target hlm_runtime)
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"

case "$action" in
  quickstart) "$build_dir/bin/hlm" run workflows/quickstart.yaml ;;
  test) ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" ;;
  build) ;;
  *) echo "unknown action '$action' (quickstart, test, build, deps)" >&2; exit 2 ;;
esac
