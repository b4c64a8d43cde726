"""The plugin manager (opd::plugins() in C++): every call has the C++ manager's semantics and
error texts. Statuses are PluginStatus objects with the C++ fields (state is a string:
available, loaded, unavailable, failed, unloading, unloaded, resident, loading)."""

from . import _C
from . import ops as _ops

__all__ = ["list", "load", "load_default", "unload", "reload", "status", "search_path"]


def list():
    """Every plugin found in the search path, merged with the state of those loaded or tried,
    sorted by name."""
    return _C._plugins_list()


def load(name_or_manifest):
    """Loads a plugin by name or manifest path, after the plugins it requires. Raises
    PluginError naming the file and what is wrong when it is refused."""
    try:
        return _C._plugins_load(str(name_or_manifest))
    finally:
        _ops._sync_methods()  # Note [Tensor methods in the class dict]


def load_default():
    """Loads every ``load: default`` plugin; one plugin's failure is in its status, not
    raised."""
    try:
        return _C._plugins_load_default()
    finally:
        _ops._sync_methods()  # Note [Tensor methods in the class dict]


def unload(name, cascade=False):
    """Deregisters a loaded plugin now; it is unmapped once nothing it made is alive. Raises
    PluginError when another loaded plugin requires it, unless cascade."""
    try:
        return _C._plugins_unload(name, cascade)
    finally:
        _ops._sync_methods()  # Note [Tensor methods in the class dict]


def reload(name):
    """Replaces a loaded plugin with the library now at its path, with no gap."""
    try:
        return _C._plugins_reload(name)
    finally:
        _ops._sync_methods()  # Note [Tensor methods in the class dict]


def status(name):
    """The status of one plugin; PluginError when no plugin of that name is known."""
    return _C._plugins_status(name)


def search_path():
    """The folders searched for manifests, in order."""
    return _C._plugins_search_path()
