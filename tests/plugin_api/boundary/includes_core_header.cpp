// Compiled with only opdispatch::plugin_api, as a plugin is (tests/CMakeLists.txt): must fail,
// because the core's headers are not on a plugin's include path. The test asserts the
// compiler's "No such file or directory" for this include.
#include "opd/dispatcher.h"
