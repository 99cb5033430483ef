# hlm_torch_pch(<target>): torch/torch.h precompiled for the files of <target> that read it,
# and for no other file.
#
# Debian's torch/torch.h precompiles to a 570 MB header that GCC loads into every file it is
# given to. Measured with GCC 12 on 2 cores: a file that includes torch compiles in 31 s with
# it and 45 s without; a file that does not takes 8 s with it and 0.9 s without; and making it
# takes 65 s per target. So the files that do not read torch (checked through the project's
# own headers) skip it, and a target with fewer than four files that read torch gets none.
set(HLM_TORCH_PCH_MIN_FILES 4)
set(_hlm_source_root "${CMAKE_CURRENT_LIST_DIR}/..")
cmake_path(NORMAL_PATH _hlm_source_root)
set(HLM_TORCH_PCH_SEARCH_DIRS
  "${_hlm_source_root}/core/include" "${_hlm_source_root}/core/src"
  "${_hlm_source_root}/runners" "${_hlm_source_root}/tests" "${_hlm_source_root}/plugins")

# Sets <out> to TRUE when <file> includes a LibTorch header, itself or through a header it
# includes that is found beside it or under HLM_TORCH_PCH_SEARCH_DIRS. Each file is read once
# per configure (a global property keeps the answer).
function(_hlm_reads_torch file out)
  get_property(known GLOBAL PROPERTY "_hlm_reads_torch:${file}" SET)
  if(known)
    get_property(answer GLOBAL PROPERTY "_hlm_reads_torch:${file}")
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "_hlm_reads_torch:${file}" FALSE)  # an include cycle ends here
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  cmake_path(GET file PARENT_PATH here)
  set(answer FALSE)
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*" "\\1" name "${line}")
    if(name MATCHES "^(torch|ATen|c10)/")
      set(answer TRUE)
      break()
    endif()
    foreach(dir IN ITEMS "${here}" ${HLM_TORCH_PCH_SEARCH_DIRS})
      if(EXISTS "${dir}/${name}" AND NOT IS_DIRECTORY "${dir}/${name}")
        _hlm_reads_torch("${dir}/${name}" reads)
        if(reads)
          set(answer TRUE)
        endif()
        break()
      endif()
    endforeach()
    if(answer)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "_hlm_reads_torch:${file}" ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

function(hlm_torch_pch target)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(torch_files 0)
  set(other_files "")
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}" NORMALIZE OUTPUT_VARIABLE file)
    _hlm_reads_torch("${file}" reads)
    if(reads)
      math(EXPR torch_files "${torch_files} + 1")
    else()
      list(APPEND other_files "${file}")
    endif()
  endforeach()
  if(torch_files LESS HLM_TORCH_PCH_MIN_FILES)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  if(other_files)
    set_source_files_properties(${other_files} TARGET_DIRECTORY ${target}
      PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endfunction()
