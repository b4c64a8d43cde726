"""``opdispatch.utils``, as ``torch.utils``: naming the vendor slot PrivateUse1 from Python and
generating its device's convenience methods (``x.acme()``, ``x.is_acme``), as
``torch.utils.backend_registration``."""

from .backend_registration import (generate_methods_for_privateuse1_backend,
                                   rename_privateuse1_backend)

__all__ = ["rename_privateuse1_backend", "generate_methods_for_privateuse1_backend"]
