# ccache in front of the compiler when it is installed (tools/setup.sh installs it with the test
# packages), so that a second build of the same sources is read from the cache: a fresh clone,
# another build folder, or the container recipe check, which builds hlm again in a Debian 12
# chroot and mounts this machine's cache there (tools/container-check.sh).
#   CCACHE_BASEDIR      paths under the source tree are hashed relative to the build folder,
#                       so clones in different places share entries;
#   CCACHE_NOHASHDIR    -g builds (the sanitizer presets) do not hash the build folder either;
#   CCACHE_COMPILERCHECK=content  the chroot's compiler is the same package installed at
#                       another time: its contents, not its mtime, identify it;
#   CCACHE_SLOPPINESS   what the precompiled torch/torch.h needs to be cached (ccache's manual,
#                       "Precompiled headers");
#   CCACHE_DEPEND       a miss is not preprocessed first to look for a second kind of hit
#                       (the compiler's -MD list names the headers): 2.8 s less per miss of a
#                       file that includes torch/torch.h.
# -DHLM_CCACHE=OFF compiles without it; a launcher given on the command line is kept.
option(HLM_CCACHE "Compile through ccache when it is installed" ON)
find_program(HLM_CCACHE_PROGRAM ccache)
if(HLM_CCACHE AND HLM_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
      CCACHE_NOHASHDIR=1
      CCACHE_COMPILERCHECK=content
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      CCACHE_DEPEND=1
      ${HLM_CCACHE_PROGRAM})
  message(STATUS "hlm: compiling through ${HLM_CCACHE_PROGRAM}")
endif()
