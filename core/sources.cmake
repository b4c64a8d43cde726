# The core's sources by component, relative to core/. Included by core/CMakeLists.txt and by the
# fuzz targets, which build the schema parser alone (with clang, which cannot build the rest).

set(OPD_ERROR_SOURCES src/error.cpp)
set(OPD_LOGGING_SOURCES src/logging.cpp)

# Data model (plugin_api/include/opd/{scalar_type,device,layout,scalar,storage,tensor,ivalue}.h)
set(OPD_DATA_SOURCES
  src/scalar_type.cpp
  src/device.cpp
  src/scalar.cpp
  src/tensor.cpp
  src/ivalue.cpp
)

# Schemas (core/include/opd/function_schema.h)
set(OPD_SCHEMA_SOURCES
  src/operator_name.cpp
  src/function_schema.cpp
  src/schema_lexer.cpp
  src/schema_parser.cpp
  src/schema_defaults.cpp
  src/schema_json.cpp
  src/default_value.cpp
)

# Dispatch keys, dispatcher and registration
set(OPD_DISPATCH_SOURCES
  src/dispatch_key.cpp
  src/dispatch_key_set.cpp
  src/local_dispatch_key_set.cpp
  src/thread_registry.cpp
  src/kernel_function.cpp
  src/infer_schema.cpp
  src/operator_entry.cpp
  src/dispatcher.cpp
  src/boxed_call.cpp
  src/library.cpp
)

# Plugins: manifests (yaml-cpp), loading (Boost.DLL), life cycle
set(OPD_PLUGIN_SOURCES
  src/registration_context.cpp
  src/plugin_manifest.cpp
  src/plugin_library.cpp
  src/plugin_manager.cpp
)
