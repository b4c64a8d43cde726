# opd_precompile_headers(TARGET HEADER...): compiles HEADERs (<x.h>, found on TARGET's include
# path) once for TARGET and includes them first in each of its C++ files. For opdispatch's own
# targets only (not installed): a small kernel file spent most of its compile time parsing the
# same headers (1.3 s of 1.5 s for plugins/cpu/equal_kernel.cpp; opd/plugin.h alone is 1.3 s),
# in each of the default, asan and tsan builds of CI.
#
# GCC uses a precompiled header only under the options it was made with, and -Winvalid-pch
# (which CMake adds) makes a mismatch an error under OPD_WERROR: a file with options of its own
# (-mavx2, -O3) is compiled without it (SKIP_PRECOMPILE_HEADERS). With OPD_PRECOMPILE_HEADERS
# OFF (the tsa preset) nothing is precompiled and every file compiles with its own includes.
function(opd_precompile_headers target)
  if(NOT OPD_PRECOMPILE_HEADERS)
    return()
  endif()
  set(headers)
  foreach(header ${ARGN})
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
  get_target_property(sources ${target} SOURCES)
  foreach(source ${sources})
    get_source_file_property(options ${source} COMPILE_OPTIONS)
    if(options)
      set_source_files_properties(${source} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
