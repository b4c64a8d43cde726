# A relocatable install: headers, libopd_core.so, the opd tool, plugins with their manifests,
# and the CMake package (opdispatchConfig.cmake, opd_add_plugin) vendors build against.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(OPD_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/opdispatch)
# Next to libopd_core.so: where the core looks for installed plugins (plugin_manager.cpp).
set(OPD_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/opdispatch/plugins)

install(TARGETS opd_core opd_plugin_api EXPORT opdispatchTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# opd-gen, for vendors' opd_add_plugin(... NATIVE_FUNCTIONS ...): the build's own, or the one it
# ran (OPD_GEN_EXECUTABLE).
if(TARGET opd-gen)
  install(TARGETS opd-gen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
else()
  install(PROGRAMS ${OPD_GEN_EXECUTABLE} DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME opd-gen)
endif()
# Two include roots, neither on a compiler's default path, so that the installed targets keep
# the boundary the build keeps: opdispatch::plugin_api sees plugin_api/ only, opdispatch::core
# (host programs) both. With the plugin API, the generated typed API (opd/ops.h,
# opd/tensor_methods.inc, opd/version.h); the kernel declarations under opd/native/ are for
# opdispatch's own plugins only.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/plugin_api/include/
  DESTINATION ${OPD_INSTALL_PLUGIN_API_INCLUDEDIR})
install(DIRECTORY ${OPD_GENERATED_DIR}/include/ DESTINATION ${OPD_INSTALL_PLUGIN_API_INCLUDEDIR}
  PATTERN native EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ DESTINATION ${OPD_INSTALL_HOST_INCLUDEDIR})
install(EXPORT opdispatchTargets NAMESPACE opdispatch:: DESTINATION ${OPD_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/opdispatchConfig.cmake.in
  ${CMAKE_BINARY_DIR}/opdispatchConfig.cmake INSTALL_DESTINATION ${OPD_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/opdispatchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_BINARY_DIR}/opdispatchConfig.cmake
  ${CMAKE_BINARY_DIR}/opdispatchConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/opdispatchPlugin.cmake
  ${PROJECT_SOURCE_DIR}/cmake/opdispatchWriteManifest.cmake
  DESTINATION ${OPD_INSTALL_CMAKEDIR})

# opd_install_plugin(NAME): installs a plugin built by opd_add_plugin with its final manifest.
function(opd_install_plugin name)
  install(TARGETS opd_plugin_${name} LIBRARY DESTINATION ${OPD_INSTALL_PLUGINDIR})
  install(FILES ${OPD_PLUGIN_OUTPUT_DIR}/${name}.yaml DESTINATION ${OPD_INSTALL_PLUGINDIR})
endfunction()
