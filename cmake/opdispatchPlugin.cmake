# opd_add_plugin(NAME SOURCES src... MANIFEST template.yaml [OUTPUT_DIR dir] [LIBS lib...])
#
# Builds an opdispatch plugin: a shared object named libopd_<NAME>.so with the flags unloading
# needs (hidden visibility, -fno-gnu-unique, no NODELETE), compiled with OPD_BUILDING_PLUGIN so
# that its OPD_LIBRARY* blocks run when the plugin manager loads it, not at dlopen. After each
# build it writes OUTPUT_DIR/<NAME>.yaml: the manifest template with `library:` set to the built
# file and `sha256:` to its digest. Used by opdispatch itself and installed for vendors.

set(_OPD_PLUGIN_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(opd_add_plugin name)
  cmake_parse_arguments(ARG "" "MANIFEST;OUTPUT_DIR" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_SOURCES OR NOT ARG_MANIFEST)
    message(FATAL_ERROR "opd_add_plugin(${name}): SOURCES and MANIFEST are required")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    if(DEFINED OPD_PLUGIN_OUTPUT_DIR)
      set(ARG_OUTPUT_DIR ${OPD_PLUGIN_OUTPUT_DIR})
    else()
      set(ARG_OUTPUT_DIR ${CMAKE_BINARY_DIR}/plugins)
    endif()
  endif()
  get_filename_component(manifest_in ${ARG_MANIFEST} ABSOLUTE)
  set(target opd_plugin_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  # The plugin API only: a plugin that includes a core header does not compile.
  if(TARGET opd_plugin_api)
    target_link_libraries(${target} PRIVATE opd_plugin_api ${ARG_LIBS})
  else()
    target_link_libraries(${target} PRIVATE opdispatch::plugin_api ${ARG_LIBS})
  endif()
  target_compile_definitions(${target} PRIVATE OPD_BUILDING_PLUGIN)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-fno-gnu-unique>)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL -Wl,-z,defs)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib" OUTPUT_NAME opd_${name}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    # The host has libopd_core.so loaded already; no RPATH, so installing never rewrites the
    # file and the manifest's sha256 stays true.
    SKIP_BUILD_RPATH ON INSTALL_RPATH "")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
      -DTEMPLATE=${manifest_in}
      -DLIBRARY=$<TARGET_FILE:${target}>
      -DOUTPUT=${ARG_OUTPUT_DIR}/${name}.yaml
      -P ${_OPD_PLUGIN_CMAKE_DIR}/opdispatchWriteManifest.cmake
    COMMENT "Writing manifest ${name}.yaml"
    VERBATIM)
endfunction()

# opd_add_native_kernels(TARGET KEY...)
#
# Compiles into TARGET the registration opd-gen generated for each dispatch KEY
# (register_<KEY>_kernels, declared in opd/native/<KEY>.h). In the opdispatch build only.
function(opd_add_native_kernels target)
  foreach(key ${ARGN})
    target_sources(${target} PRIVATE ${OPD_GENERATED_DIR}/src/register_${key}.cpp)
  endforeach()
  add_dependencies(${target} opd_generated)
endfunction()
