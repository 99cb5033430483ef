# hlm_warnings: one INTERFACE target that carries the project's warning flags. Every hlm
# target links it (libraries, the binary, in-tree plugins, tests); CI turns warnings into
# errors with -DHLM_WARNINGS_AS_ERRORS=ON so a new warning fails the build there first.
option(HLM_WARNINGS_AS_ERRORS "Treat compiler warnings as errors (CI sets this)" OFF)
add_library(hlm_warnings INTERFACE)
add_library(hlm::warnings ALIAS hlm_warnings)
target_compile_options(hlm_warnings INTERFACE -Wall -Wextra
  $<$<BOOL:${HLM_WARNINGS_AS_ERRORS}>:-Werror>)
