# hlm_add_plugin(<target> SOURCES <files...> [TORCH|LIBTORCH] [LIBRARIES <libs...>]): builds one hlm
# plugin shared library. The same function serves in-tree and out-of-tree plugins (after
# find_package(hlm)): it links the SDK, stamps the build fingerprint the host checks at load
# time, and writes the library to HLM_PLUGIN_OUTPUT_DIR (default <build>/plugins), a folder
# `hlm --plugin-path` or HLM_PLUGIN_PATH can name. Pass TORCH when the plugin uses LibTorch and
# hlm's LibTorch library (its kernels, the transformer block), LIBTORCH when it uses LibTorch
# and the SDK only.
include("${CMAKE_CURRENT_LIST_DIR}/HlmTorchPch.cmake")

function(hlm_add_plugin target)
  cmake_parse_arguments(ARG "TORCH;LIBTORCH" "" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT HLM_PLUGIN_OUTPUT_DIR)
    set(HLM_PLUGIN_OUTPUT_DIR "${CMAKE_BINARY_DIR}/plugins")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "libhlm_plugin_" OUTPUT_NAME "${target}"
    LIBRARY_OUTPUT_DIRECTORY "${HLM_PLUGIN_OUTPUT_DIR}"
    CXX_STANDARD 17 CXX_VISIBILITY_PRESET hidden)
  if(ARG_TORCH)
    target_link_libraries(${target} PRIVATE hlm::torch ${TORCH_LIBRARIES} ${ARG_LIBRARIES})
    hlm_torch_pch(${target})
  elseif(ARG_LIBTORCH)
    # LibTorch and the SDK, without hlm's own LibTorch library (the sanitizer builds use such
    # a plugin without building all of hlm_torch).
    target_link_libraries(${target} PRIVATE hlm::base ${TORCH_LIBRARIES} ${ARG_LIBRARIES})
  else()
    target_link_libraries(${target} PRIVATE hlm::base ${ARG_LIBRARIES})
  endif()
  # In-tree plugins get the project's warning flags; out-of-tree ones choose their own.
  if(TARGET hlm_warnings)
    target_link_libraries(${target} PRIVATE hlm_warnings)
  endif()
  # Installed beside the binary's libraries: <prefix>/lib/hlm/plugins, two levels under lib/.
  # And LibTorch where it was built against it (cmake/HlmTorch.cmake).
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../..;${TORCH_INSTALL_PREFIX}/lib")
  install(TARGETS ${target} LIBRARY DESTINATION lib/hlm/plugins)
  if(TARGET hlm_runtime)  # in-tree: part of what a run needs
    add_dependencies(hlm_runtime ${target})
  endif()
endfunction()
