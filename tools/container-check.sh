#!/usr/bin/env bash
# Proves the container recipe without Apptainer or a registry: builds a Debian 12 root file
# system from Debian packages (debootstrap), runs containers/install-hlm.sh in it (the build
# steps of containers/hlm.def's %post and of containers/Dockerfile) with chroot, then runs the
# quick start with the installed hlm inside.
#   bash tools/container-check.sh [WORK_DIR]   # as root; WORK_DIR (default: a temp folder)
#                                              # is removed at the end unless KEEP=1
# Exits 77 with the reason when this machine cannot run it (not root, no debootstrap, no
# Debian mirror); the ctest ContainerRecipe (tests/CMakeLists.txt) skips then.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
skip() { echo "skipped: $*" >&2; exit 77; }

[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed (bash tools/setup.sh deps)"
# The machine's own Debian mirror: the image gets the packages this machine gets.
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[[ -n $mirror ]] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[[ -n $mirror ]] || skip "no Debian mirror in /etc/apt/sources.list.d/debian.sources or sources.list"
curl -fsS -o /dev/null --max-time 20 "$mirror/dists/bookworm/Release" ||
  skip "the Debian mirror $mirror cannot be reached"

# PyTorch's CMake package (the .venv's torch, which hlm builds against) needs a CUDA toolkit to
# configure: the chroot borrows this machine's, mounted read-only at the path it has here, as an
# image gets it from its base or from NVIDIA's cuda-toolkit package. nvcc names its toolkit
# (TOP in its dry run); when the folder above the nvcc on PATH is that toolkit under another
# name (/usr/local/cuda, a link to the versioned folder) that name is kept, so the compile lines
# and the compiler cache's keys are this machine's. An nvcc on PATH that is a wrapper script
# (/usr/local/bin/nvcc) gives the toolkit's own folder.
nvcc=$(command -v nvcc || true)
[[ -n $nvcc ]] || skip "no CUDA toolkit here (nvcc not on PATH) to lend the chroot"
top=$("$nvcc" --dryrun -c -x cu -o /dev/null /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)
toolkit=$(realpath -e "${top:-/nonexistent}" 2>/dev/null || true)
[[ -n $toolkit && -x $toolkit/bin/nvcc ]] ||
  skip "cannot tell the CUDA toolkit's folder from $nvcc (its dry run names none)"
cuda_root=$(dirname "$(dirname "$nvcc")")
[[ $(realpath -e "$cuda_root") == "$toolkit" ]] || cuda_root=$toolkit

work="${1:-$(mktemp -d /tmp/hlm-container.XXXXXX)}"
root="$work/rootfs"
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  # A bind mount that did not come off keeps the folder: the compiler cache's mount is on the
  # same file system, where --one-file-system would not stop rm from emptying the cache.
  for m in "${mounted[@]}"; do
    if mountpoint -q "$m"; then
      echo "kept $work: $m is still mounted" >&2
      return
    fi
  done
  [[ ${KEEP:-0} == 1 ]] || rm -rf --one-file-system "$work"
}
trap cleanup EXIT

step() { echo "== $(date -u +%H:%M:%S) $*"; }
step "debootstrap bookworm from $mirror into $root"
mkdir -p "$work"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log"; exit 1; }

# The machine's apt configuration and name resolution, so apt-get inside reaches the same mirror.
cp /etc/hosts /etc/resolv.conf "$root/etc/" 2>/dev/null || true
cp -r /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/" 2>/dev/null || true
[[ -f /etc/apt/sources.list ]] && cp /etc/apt/sources.list "$root/etc/apt/"
cp -r /etc/apt/apt.conf.d/. "$root/etc/apt/apt.conf.d/" 2>/dev/null || true
# pip reaches PyPI as here: through this machine's CA bundle (which may hold a local proxy's CA
# that the chroot's ca-certificates lacks), given to pip alone as PIP_CERT.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/hlm-host-ca.crt" 2>/dev/null || true
for fs in proc sys dev dev/pts; do
  mkdir -p "$root/$fs"
  mount --bind "/$fs" "$root/$fs"
  mounted+=("$root/$fs")
done

step "copy the source tree (what %files and COPY take) into /opt/hlm"
mkdir -p "$root/opt/hlm"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
    tar -C "$root/opt/hlm" -xf -
else
  tar -C "$src" --exclude=./build --exclude=./runs -cf - . | tar -C "$root/opt/hlm" -xf -
fi

# This machine's compiler cache, when it has one, mounted in the chroot with ccache installed
# there: the recipe's build then reads the objects of this machine's build of the same sources
# (cmake/HlmCompilerCache.cmake) and the check proves the recipe without compiling hlm twice.
# Everything else the recipe installs and runs is as in an image build.
cache_env=()
if command -v ccache >/dev/null; then
  cache_dir=$(ccache -k cache_dir)
  step "ccache in the chroot, with this machine's cache $cache_dir"
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    bash -c "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends ccache >/dev/null"
  mkdir -p "$cache_dir" "$root/var/cache/hlm-ccache"
  mount --bind "$cache_dir" "$root/var/cache/hlm-ccache"
  mounted+=("$root/var/cache/hlm-ccache")
  # The stats log counts this build's compilations alone (the cache's counters are shared).
  cache_env=(CCACHE_DIR=/var/cache/hlm-ccache CCACHE_STATSLOG=/tmp/hlm-ccache-stats.log)
  # ccache hashes the locale variables (they change the compiler's messages): the chroot gets
  # this machine's, or no object would match.
  for v in LANG LC_ALL LC_CTYPE LC_MESSAGES; do
    [[ -v $v ]] && cache_env+=("$v=${!v}")
  done
fi

step "this machine's CUDA toolkit $cuda_root, read-only in the chroot"
mkdir -p "$root$cuda_root"
mount --bind "$cuda_root" "$root$cuda_root"
mounted+=("$root$cuda_root")
mount -o remount,bind,ro "$root$cuda_root"

step "containers/install-hlm.sh in the chroot"
chroot "$root" /usr/bin/env -i \
  PATH=$cuda_root/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  PIP_CERT=/etc/hlm-host-ca.crt HOME=/root HLM_WARNINGS_AS_ERRORS="${HLM_WARNINGS_AS_ERRORS:-OFF}" "${cache_env[@]}" \
  bash /opt/hlm/containers/install-hlm.sh
if ((${#cache_env[@]})); then
  step "the recipe's compilations, from the cache or compiled"
  chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin "${cache_env[@]}" ccache --show-log-stats || true
fi

step "the quick start with the installed hlm"
chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root OPENBLAS_NUM_THREADS=1 \
  bash -c "cd /opt/hlm && hlm run workflows/quickstart.yaml ${HLM_QUICKSTART_OVERRIDES:-} --runs-dir /tmp/runs"
report=$(ls "$root"/tmp/runs/quickstart/*/report.md)
step "done: $report"
sed -n "/^| stage/,/^$/p" "$report"   # every stage, with its status
