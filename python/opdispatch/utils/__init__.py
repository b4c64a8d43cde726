"""``opdispatch.utils``, as ``torch.utils``: naming the vendor slots PrivateUse1..3 from Python
and generating their devices' convenience methods (``x.acme()``, ``x.is_acme``), as
``torch.utils.backend_registration`` does for its one slot."""

from .backend_registration import (generate_methods_for_privateuse1_backend,
                                   generate_methods_for_privateuse_backend,
                                   rename_privateuse1_backend, rename_privateuse_backend)

__all__ = ["rename_privateuse1_backend", "generate_methods_for_privateuse1_backend",
           "rename_privateuse_backend", "generate_methods_for_privateuse_backend"]
