"""opdispatch: an operator runtime built like PyTorch's c10 dispatcher, with every backend a
plugin loaded at run time.

Importing the package loads the default plugins (the manifests that say ``load: default``),
as the ``opd`` tool does. A plugin that fails to load is a RuntimeWarning naming it and why;
one that reports itself unavailable (cuda without a GPU) is silent. Set
``OPDISPATCH_NO_DEFAULT_PLUGINS=1`` to load none.
"""

import os as _os
import warnings as _warnings

from . import _C
from . import plugins
from ._C import PluginError

__all__ = ["PluginError", "plugins"]


def _load_default_plugins():
    if _os.environ.get("OPDISPATCH_NO_DEFAULT_PLUGINS") == "1":
        return
    for status in plugins.load_default():
        if status.state == "failed":
            _warnings.warn(
                f"opdispatch: the default plugin '{status.name}' failed to load: "
                f"{status.reason}",
                RuntimeWarning,
                stacklevel=3,
            )


_load_default_plugins()
