#!/usr/bin/env bash
# Makes the project's virtual environment .venv (ignored by git) with the pinned PyPI packages
# of tools/python-requirements.txt: torch, whose wheel carries the LibTorch hlm builds against
# (CMake package at torch.utils.cmake_prefix_path) and the PyTorch the parity tests and the
# peers run on, and the peers' numpy, scipy and scikit-learn. Does nothing when .venv already
# holds exactly those versions. HLM_VENV names another folder.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${HLM_VENV:-.venv}"
requirements=tools/python-requirements.txt
stamp="$venv/.hlm-requirements"

if [[ -x $venv/bin/python3 ]] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
echo "python-env: installing $(grep -v '^#' "$requirements" | xargs) into $venv"
# Debian's interpreter, so the environment does not depend on whichever python3 is first on PATH.
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
"$venv/bin/python3" -c 'import torch; print("python-env: torch", torch.__version__, "CUDA", torch.version.cuda)'
cp "$requirements" "$stamp"
