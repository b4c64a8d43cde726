# opd_add_plugin(NAME SOURCES src... MANIFEST template.yaml [OUTPUT_DIR dir] [LIBS lib...]
#                [NATIVE_FUNCTIONS functions.yaml [DERIVATIVES derivatives.yaml]])
#
# Builds an opdispatch plugin: a shared object named libopd_<NAME>.so with the flags unloading
# needs (hidden visibility, -fno-gnu-unique, no NODELETE), compiled with OPD_BUILDING_PLUGIN so
# that its OPD_LIBRARY* blocks run when the plugin manager loads it, not at dlopen. After each
# build it writes OUTPUT_DIR/<NAME>.yaml: the manifest template with `library:` set to the built
# file and `sha256:` to its digest. Used by opdispatch itself and installed for vendors.
#
# NATIVE_FUNCTIONS runs opd-gen on the vendor's native_functions.yaml (its operators' namespace,
# say acme) and compiles what it writes into the plugin: the schemas, the registration of every
# kernel its `dispatch:` entries name (declared in acme/native/<Key>.h, defined by the plugin's
# sources: one left undefined fails the link) and, with DERIVATIVES, an Autograd kernel per
# derivatives.yaml entry. Host programs and other plugins reach the typed API (acme/ops.h)
# through the INTERFACE target opd_plugin_<NAME>_api. See tools/gen/README.md.

set(_OPD_PLUGIN_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(opd_add_plugin name)
  cmake_parse_arguments(ARG "" "MANIFEST;OUTPUT_DIR;NATIVE_FUNCTIONS;DERIVATIVES" "SOURCES;LIBS"
    ${ARGN})
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
  if(ARG_NATIVE_FUNCTIONS)
    _opd_generate_native_functions(${name} ${target})
  elseif(ARG_DERIVATIVES)
    message(FATAL_ERROR "opd_add_plugin(${name}): DERIVATIVES needs NATIVE_FUNCTIONS")
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
      -DTEMPLATE=${manifest_in}
      -DLIBRARY=$<TARGET_FILE:${target}>
      -DOUTPUT=${ARG_OUTPUT_DIR}/${name}.yaml
      -P ${_OPD_PLUGIN_CMAKE_DIR}/opdispatchWriteManifest.cmake
    COMMENT "Writing manifest ${name}.yaml"
    VERBATIM)
endfunction()

# opd-gen for opd_add_plugin's NATIVE_FUNCTIONS (ARG_* are the caller's). opd-gen is the
# build's own (OPD_GEN_COMMAND, tools/gen) or the installed one (opdispatchConfig.cmake).
function(_opd_generate_native_functions name target)
  if(NOT OPD_GEN_COMMAND)
    message(FATAL_ERROR "opd_add_plugin(${name}): NATIVE_FUNCTIONS needs opd-gen (OPD_GEN_COMMAND)")
  endif()
  get_filename_component(yaml ${ARG_NATIVE_FUNCTIONS} ABSOLUTE)
  file(RELATIVE_PATH yaml_name ${CMAKE_CURRENT_SOURCE_DIR} ${yaml})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/opd_gen_${name})
  set(outputs ${dir}/src/schemas.cpp ${dir}/src/kernels.cpp ${dir}/src/autograd.cpp)
  set(args --yaml ${yaml} --out ${dir} --display-name ${yaml_name})
  set(depends ${yaml})
  if(ARG_DERIVATIVES)
    get_filename_component(derivatives ${ARG_DERIVATIVES} ABSOLUTE)
    file(RELATIVE_PATH derivatives_name ${CMAKE_CURRENT_SOURCE_DIR} ${derivatives})
    list(APPEND args --derivatives ${derivatives} --derivatives-display-name ${derivatives_name})
    list(APPEND depends ${derivatives})
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${OPD_GEN_COMMAND} ${args}
    DEPENDS ${OPD_GEN_COMMAND} ${depends}
    COMMENT "opd-gen: the ${name} plugin's operators from ${yaml_name}"
    VERBATIM)
  # The plugin's own sources include the generated headers: generate before compiling any.
  add_custom_target(${target}_generated DEPENDS ${outputs})
  add_dependencies(${target} ${target}_generated)
  target_sources(${target} PRIVATE ${outputs})
  target_include_directories(${target} PRIVATE ${dir}/include)
  # The typed API for host programs and other plugins.
  add_library(${target}_api INTERFACE)
  target_include_directories(${target}_api INTERFACE ${dir}/include)
  add_dependencies(${target}_api ${target}_generated)
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
