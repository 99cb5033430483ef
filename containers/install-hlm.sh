#!/usr/bin/env bash
# The build steps of every hlm image (hlm.def's %post, the Dockerfile's RUN, and
# tools/container-check.sh's chroot): from the source tree in /opt/hlm, install the Debian
# packages hlm needs and the .venv with PyPI's torch (tools/setup.sh deps), build it in a fresh
# build-image folder and install it under /usr/local (bin/hlm, lib/, lib/hlm/plugins,
# include/hlm; hlm finds LibTorch in /opt/hlm/.venv, which stays), then drop the build folder
# and the package lists to keep the image small. Configuring needs a CUDA 13 toolkit (nvcc on
# PATH, or CUDAToolkit_ROOT), which PyTorch's CMake package looks for: the image's base or an
# earlier step must provide it.
set -euo pipefail
src="${HLM_SOURCE:-/opt/hlm}"
# Inside the source tree, as tools/setup.sh builds: with ccache in the image (the container
# check's chroot has it), the objects of a build of the same sources elsewhere are reused.
build="$src/build-image"
rm -rf "$build"
cd "$src"
apt-get update -q
HLM_PACKAGES=build bash tools/setup.sh deps
if ! command -v nvcc >/dev/null && [[ -z ${CUDAToolkit_ROOT:-} ]]; then
  echo "install-hlm.sh: no CUDA toolkit (nvcc not on PATH, CUDAToolkit_ROOT unset): PyTorch's" \
    "CMake package needs one to configure; build FROM an image with the CUDA 13 toolkit, or" \
    "install NVIDIA's cuda-toolkit-13-0 package first" >&2
  exit 1
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHLM_BUILD_TESTS=OFF \
  -DHLM_WARNINGS_AS_ERRORS="${HLM_WARNINGS_AS_ERRORS:-OFF}" -DCMAKE_INSTALL_PREFIX=/usr/local
cmake --build "$build" -j"$(nproc)"
cmake --install "$build"
ldconfig
rm -rf "$build" /var/lib/apt/lists/* /root/.cache/pip
hlm plugins | grep -c "^[a-z]" | xargs echo "plugins found by the installed hlm:"
