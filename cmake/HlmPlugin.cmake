# hlm_add_plugin(<target> SOURCES <files...> [TORCH]): builds one hlm plugin shared library.
# The same function serves in-tree and out-of-tree plugins: it links the SDK, stamps the
# build fingerprint the host checks at load time, and puts the library where the host looks.
# Pass TORCH when the plugin uses LibTorch (models, backends).
function(hlm_add_plugin target)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "libhlm_plugin_" OUTPUT_NAME "${target}"
    LIBRARY_OUTPUT_DIRECTORY "${HLM_PLUGIN_OUTPUT_DIR}"
    CXX_VISIBILITY_PRESET hidden)
  if(TARGET hlm::engine)
    set(_sdk hlm::base)
    if(ARG_TORCH)
      set(_sdk hlm::engine)
    endif()
  else()
    find_package(hlm REQUIRED)
    set(_sdk hlm::base)
    if(ARG_TORCH)
      set(_sdk hlm::engine)
    endif()
  endif()
  target_link_libraries(${target} PRIVATE ${_sdk} ${ARG_LIBRARIES})
  if(ARG_TORCH)
    target_link_libraries(${target} PRIVATE ${TORCH_LIBRARIES})
    target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  endif()
endfunction()
