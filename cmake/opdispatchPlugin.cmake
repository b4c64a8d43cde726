# opd_add_plugin(NAME SOURCES src... MANIFEST template.yaml [OUTPUT_DIR dir] [LIBS lib...]
#                [NATIVE_FUNCTIONS functions.yaml [DERIVATIVES derivatives.yaml]])
#
# Builds an opdispatch plugin: a shared object named libopd_<NAME>.so with the flags unloading
# needs (hidden visibility, -fno-gnu-unique, no NODELETE), compiled with OPD_BUILDING_PLUGIN so
# that its OPD_LIBRARY* blocks run when the plugin manager loads it, not at dlopen. After each
# build it writes OUTPUT_DIR/<NAME>.yaml: the manifest template with `library:` set to the built
# file, `sha256:` to its digest and `abi:` to the plugin ABI major of the opdispatch it builds
# against. Used by opdispatch itself and installed for vendors.
#
# Note [The manifest's abi at build time]: the plugin manager refuses a plugin whose manifest
# states another ABI major than its own (OPD_PLUGIN_ABI_MAJOR), which a vendor who wrote `abi:`
# by hand learnt only when a load failed after the package moved on. The template may omit
# `abi:`: the manifest gets the major of the opd/plugin.h the plugin compiles with (the source
# tree's in opdispatch's own build, the installed package's for a vendor). A template that
# states another major fails the configuration, naming the template, its value and the
# package's; the template is a configure dependency, so an edit is checked before the next
# build. The loader's refusal stays, for a plugin built against another package.
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
  _opd_plugin_abi_major(abi_major abi_header)
  _opd_check_template_abi(${name} ${manifest_in} ${abi_major} ${abi_header})
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
  # The manifest is written after each link: a template edited relinks.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${manifest_in})
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
      -DTEMPLATE=${manifest_in}
      -DLIBRARY=$<TARGET_FILE:${target}>
      -DOUTPUT=${ARG_OUTPUT_DIR}/${name}.yaml
      -DABI=${abi_major}
      -P ${_OPD_PLUGIN_CMAKE_DIR}/opdispatchWriteManifest.cmake
    COMMENT "Writing manifest ${name}.yaml"
    VERBATIM)
endfunction()

# Sets `out` to OPD_PLUGIN_ABI_MAJOR as the opd/plugin.h that plugins compile with defines it,
# and `out_header` to that file (Note [The manifest's abi at build time]).
function(_opd_plugin_abi_major out out_header)
  if(TARGET opd_plugin_api)
    set(dirs ${opdispatch_SOURCE_DIR}/plugin_api/include)
  else()
    get_target_property(dirs opdispatch::plugin_api INTERFACE_INCLUDE_DIRECTORIES)
  endif()
  foreach(dir ${dirs})
    if(EXISTS ${dir}/opd/plugin.h)
      file(STRINGS ${dir}/opd/plugin.h define REGEX "^#define OPD_PLUGIN_ABI_MAJOR [0-9]+$")
      if(define MATCHES "([0-9]+)$")
        # A major bump in the source tree reconfigures, and rewrites every manifest.
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/opd/plugin.h)
        set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
        set(${out_header} ${dir}/opd/plugin.h PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
  message(FATAL_ERROR "opd_add_plugin: no opd/plugin.h defining OPD_PLUGIN_ABI_MAJOR in ${dirs}")
endfunction()

# Fails when the manifest template states an `abi:` other than `major`.
function(_opd_check_template_abi name template major header)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${template})
  file(STRINGS ${template} lines REGEX "^abi:")
  foreach(line ${lines})
    string(REGEX MATCH "^abi:[ \t]*([^# \t]*)" value "${line}")
    set(value "${CMAKE_MATCH_1}")
    if(NOT "${value}" STREQUAL "${major}")
      message(FATAL_ERROR "opd_add_plugin(${name}): the manifest template ${template} states "
        "'abi: ${value}', but the opdispatch package it builds against has plugin ABI major "
        "${major} (OPD_PLUGIN_ABI_MAJOR in ${header}). Remove the 'abi:' line (opd_add_plugin "
        "writes the package's) or build against a package of ABI ${value}.")
    endif()
  endforeach()
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
