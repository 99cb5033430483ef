# Finds LibTorch as PyTorch's own wheel ships it (headers, libraries, CMake package) and sets
#   HLM_PYTHON         the interpreter whose torch hlm builds against; the parity tests and the
#                      peers run on it, so both sides use one torch
#   HLM_WITH_CUDA      ON when that LibTorch was built with CUDA (the wheel's is)
#   HLM_CUDA_VERSION   its CUDA version ("13.0"), or "none"
# HLM_PYTHON defaults to the project's virtual environment (.venv, made by tools/setup.sh); on
# a machine whose own python3 holds torch, -DHLM_PYTHON=/usr/bin/python3 builds against that.
# -DTorch_DIR=... still wins over both.
set(HLM_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python3" CACHE FILEPATH
    "Python interpreter whose torch package provides LibTorch")
if(NOT Torch_DIR)
  if(NOT EXISTS "${HLM_PYTHON}")
    message(FATAL_ERROR "hlm: no Python at ${HLM_PYTHON} to find LibTorch in. Run "
                        "`bash tools/setup.sh deps` (it makes .venv with PyPI's torch), or pass "
                        "-DHLM_PYTHON=<a python3 with torch> or -DTorch_DIR=<LibTorch's share/cmake/Torch>.")
  endif()
  execute_process(
    COMMAND "${HLM_PYTHON}" -c "import torch; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _hlm_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_VARIABLE _hlm_torch_error RESULT_VARIABLE _hlm_torch_rc)
  if(NOT _hlm_torch_rc EQUAL 0)
    message(FATAL_ERROR "hlm: ${HLM_PYTHON} cannot import torch (${_hlm_torch_error}). "
                        "Run `bash tools/setup.sh deps` to install the pinned torch into .venv.")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH "${_hlm_torch_prefix}")
endif()

find_package(Torch REQUIRED)
if(TORCH_CUDA_LIBRARIES OR CUDAToolkit_VERSION)
  set(HLM_WITH_CUDA ON)
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" HLM_CUDA_VERSION "${CUDAToolkit_VERSION}")
else()
  set(HLM_WITH_CUDA OFF)
  set(HLM_CUDA_VERSION "none")
endif()
message(STATUS "hlm: LibTorch ${Torch_VERSION} (CUDA ${HLM_CUDA_VERSION}) from ${Torch_DIR}")
# Installed binaries find LibTorch where they were built against it (the .venv's torch/lib,
# whose libraries find their nvidia-* neighbours through RPATHs of their own).
set(HLM_TORCH_LIBRARY_DIR "${TORCH_INSTALL_PREFIX}/lib")
# hlm's own CUDA code (graphs, events, the caching allocator's statistics) links the CUDA
# runtime itself: installed binaries also search the wheel's copy, beside torch
# (site-packages/nvidia/cu13/lib), where no CUDA toolkit is installed.
file(GLOB _hlm_cudart "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib/libcudart.so*")
if(_hlm_cudart)
  list(GET _hlm_cudart 0 _hlm_cudart)
  get_filename_component(_hlm_cudart_dir "${_hlm_cudart}" DIRECTORY)
  get_filename_component(_hlm_cudart_dir "${_hlm_cudart_dir}" REALPATH)
  list(APPEND HLM_TORCH_LIBRARY_DIR "${_hlm_cudart_dir}")
endif()

# PyTorch's wheel ships the fmt headers it builds with (fmt 12) in torch/include, which the
# compiler would find before Debian's (fmt 9), on which Debian's spdlog is built. A folder with a
# link to Debian's fmt alone, searched before torch/include, keeps every file on the fmt that
# spdlog and hlm link; torch's headers compile against it too (they use fmt only inline, in
# another inline namespace), and its libraries keep their own copy inside.
set(HLM_SYSTEM_HEADER_SHIM "${CMAKE_BINARY_DIR}/hlm-system-headers")
file(REMOVE_RECURSE "${HLM_SYSTEM_HEADER_SHIM}")
file(MAKE_DIRECTORY "${HLM_SYSTEM_HEADER_SHIM}")
# HLM_FMT_INCLUDE_DIR: where that fmt's headers are (tools/device-check's unpacked packages).
set(HLM_FMT_INCLUDE_DIR "/usr/include" CACHE PATH "the folder holding the fmt headers spdlog uses")
if(EXISTS "${HLM_FMT_INCLUDE_DIR}/fmt" AND EXISTS "${TORCH_INSTALL_PREFIX}/include/fmt")
  file(CREATE_LINK "${HLM_FMT_INCLUDE_DIR}/fmt" "${HLM_SYSTEM_HEADER_SHIM}/fmt" SYMBOLIC)
endif()
include_directories(BEFORE SYSTEM "${HLM_SYSTEM_HEADER_SHIM}")
# Out-of-tree plugins get it through hlm::base (core/CMakeLists.txt).
