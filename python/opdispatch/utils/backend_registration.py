"""PrivateUse1 from Python, as torch.utils.backend_registration: ``rename_privateuse1_backend``
names the vendor slot (opd::register_privateuse1_backend; a plugin usually names it at load),
``generate_methods_for_privateuse1_backend`` gives the named device torch's convenience methods:
``Tensor.<name>(device=None, non_blocking=False, **kwargs)``, the property ``Tensor.is_<name>``
and ``Module.<name>(device=None)``. Error types and texts are torch 2.x's.

torch has one vendor slot; opdispatch has three (opd/privateuse.h, Note [Vendor slots]), each
claimed by name: ``rename_privateuse_backend(name, slot=None)`` claims one for the process and
``generate_methods_for_privateuse_backend(backend)`` gives any slot's device the same methods."""

import opdispatch as _opd

__all__ = ["rename_privateuse1_backend", "generate_methods_for_privateuse1_backend",
           "rename_privateuse_backend", "generate_methods_for_privateuse_backend"]

_UNNAMED = "privateuseone"
# opd::register_privateuse1_backend refuses these (plugin_api/src/dispatch_key.cpp).
_BUILT_IN = ("cpu", "cuda", "meta")


def _get_privateuse1_backend_name():
    """The registered name, or ``"privateuseone"`` before any (torch's)."""
    return _opd._C._get_privateuse1_backend_name()


def rename_privateuse1_backend(backend_name: str) -> None:
    """Names the PrivateUse1 backend ``backend_name``, once per process, so that it is a device
    string (``opdispatch.device("acme:0")``, ``x.to("acme")``). Naming it again with the same
    name (as the plugin that named it at load) does nothing; another name is a RuntimeError
    naming the current one. The slot's kernels come from a plugin (``OPD_LIBRARY_IMPL(aten,
    PrivateUse1, m)``)."""
    if not isinstance(backend_name, str):
        raise TypeError(f"rename_privateuse1_backend(): argument 'backend_name' must be str, not "
                        f"{type(backend_name).__name__}")
    current = _get_privateuse1_backend_name()
    if current != _UNNAMED and current != backend_name:
        raise RuntimeError("opdispatch.utils.rename_privateuse1_backend() has already been set! "
                           f"Current backend: {current}")
    if backend_name in _BUILT_IN:
        raise RuntimeError(
            f"Cannot register privateuse1 backend with in-tree device name: {backend_name}")
    if not backend_name:
        raise RuntimeError("Cannot register privateuse1 backend with an empty name")
    # opd::register_privateuse1_backend, which the checks above leave nothing to refuse but a
    # plugin naming the slot in between, from another thread (its ValueError names both).
    _opd._C._rename_privateuse1_backend(backend_name)


def _slot_number(slot):
    if isinstance(slot, bool) or not isinstance(slot, int):
        raise TypeError(f"the vendor slot must be 1, 2 or 3, not {type(slot).__name__}")
    if slot not in (1, 2, 3):
        raise ValueError(f"vendor slot {slot} does not exist: the slots are 1, 2 and 3")
    return slot


def rename_privateuse_backend(backend_name: str, slot=None) -> int:
    """Claims vendor slot ``slot`` (1, 2 or 3; None: the first free one) under ``backend_name``
    for the process, for good, and returns the slot's number: ``backend_name`` is a device string
    from then on (``x.to("acmetwo")``). A plugin usually claims its slot at load
    (``opd::register_privateuse_backend``), and one may serve the name the process gave. Claiming
    a name or a slot another holder has, or one when none is free, raises
    ``opdispatch.PluginError`` (a RuntimeError) naming the holder; a name that cannot be a device
    string (letters and underscores, not a built-in device) raises ValueError. Claiming the
    process's own name again returns its slot."""
    if not isinstance(backend_name, str):
        raise TypeError(f"rename_privateuse_backend(): argument 'backend_name' must be str, not "
                        f"{type(backend_name).__name__}")
    if slot is not None:
        slot = _slot_number(slot)
    return _opd._C._register_privateuse_backend(backend_name, slot)


def _privateuse_backend_name(backend):
    """The device name of ``backend``: a slot's number (its name, or ``"privateusetwo"`` while
    unnamed), or a name that is a vendor slot's."""
    if isinstance(backend, str):
        # A vendor slot's name parses as a device (torch's RuntimeError otherwise).
        if backend in _BUILT_IN or _opd.device(backend).type != backend:
            raise RuntimeError(f"'{backend}' is not the name of a vendor backend")
        return backend
    return _opd._C._get_privateuse_backend_name(_slot_number(backend))


def _check_register_once(module, attr):
    if hasattr(module, attr):
        raise RuntimeError(
            f"The custom device module of {module} has already been registered with {attr}")


def _current_device_index(custom_backend_name):
    """The calling thread's current device of the backend, from the device guard its plugin
    registered (opd/device_guard.h); 0 when it registered none (one device)."""
    index = _opd._C._ensure_has_index(_opd.device(custom_backend_name)).index
    return 0 if index is None else index


def _normalization_device(custom_backend_name, device=None):
    """The device index ``device`` (None, an int, a string or a device of the backend) names;
    None and an index-less device are the current device."""
    if device is None:
        return _current_device_index(custom_backend_name)
    if isinstance(device, str):
        device = _opd.device(device)
    if isinstance(device, _opd.device):
        if device.type != custom_backend_name:
            raise RuntimeError(f"Invalid device, must be {custom_backend_name} device")
        if device.index is None:
            return _current_device_index(custom_backend_name)
        return device.index
    return device


def _generate_tensor_methods(custom_backend_name):
    def wrap_tensor_backend(self):
        return self.device.type == custom_backend_name

    _check_register_once(_opd.Tensor, f"is_{custom_backend_name}")
    setattr(_opd.Tensor, f"is_{custom_backend_name}", property(wrap_tensor_backend))

    def wrap_tensor_to(self, device=None, non_blocking=False, **kwargs):
        """This tensor on the custom device (``self`` when it already is there), through
        ``Tensor.to``; ``device`` an index, a device or a device string of the backend."""
        index = _normalization_device(custom_backend_name, device)
        return self.to(device=_opd.device(f"{custom_backend_name}:{index}"),
                       non_blocking=non_blocking, **kwargs)

    _check_register_once(_opd.Tensor, custom_backend_name)
    setattr(_opd.Tensor, custom_backend_name, wrap_tensor_to)


def _check_tensor_method_for_module(custom_backend_name):
    """The Module method moves tensors with the Tensor one: torch refuses for_module without
    it, whether or not there is a Module class to give the method to."""
    if not hasattr(_opd.Tensor, custom_backend_name):
        raise RuntimeError(
            f"Can not automatically generate {custom_backend_name}() method for "
            f"opdispatch.nn.Module.Because opdispatch.Tensor doesn't has the method "
            f"{custom_backend_name}().For this error, you can try setting for_tensor=True.")


def _generate_module_methods(custom_backend_name, module_class):
    def wrap_module_to(self, device=None):
        """Moves the module's parameters and buffers to the custom device (``_apply``), in
        place; returns the module."""
        return self._apply(lambda t: getattr(t, custom_backend_name)(device))

    _check_register_once(module_class, custom_backend_name)
    setattr(module_class, custom_backend_name, wrap_module_to)


def generate_methods_for_privateuse1_backend(for_tensor: bool = True, for_module: bool = True,
                                             for_storage: bool = False,
                                             unsupported_dtype=None) -> None:
    """Gives the PrivateUse1 backend, under its registered name (``"privateuseone"`` before
    one, as torch), torch's generated methods: ``Tensor.<name>()`` and ``Tensor.is_<name>``
    (for_tensor), ``Module.<name>()`` (for_module; it needs the Tensor method). Generating a
    method that exists is a RuntimeError naming it.

    opdispatch has no Module classes (``opdispatch.nn`` holds ``functional`` only): for_module
    gives the method to ``opdispatch.nn.Module`` where that exists, an object with torch's
    ``_apply(fn)``, and has nothing to generate otherwise (without the Tensor method it is
    refused either way, as torch). It has no Storage classes either:
    for_storage (and with it unsupported_dtype, which applies to storages only) is a
    NotImplementedError."""
    if for_storage:
        raise NotImplementedError(
            "generate_methods_for_privateuse1_backend: opdispatch has no Storage classes, so "
            "for_storage=True has nothing to generate methods for")
    _generate_methods(_get_privateuse1_backend_name(), for_tensor, for_module)


def generate_methods_for_privateuse_backend(backend, for_tensor: bool = True,
                                            for_module: bool = True, for_storage: bool = False,
                                            unsupported_dtype=None) -> None:
    """``generate_methods_for_privateuse1_backend`` for any vendor slot: ``backend`` is the
    slot's number (1, 2 or 3: the methods carry its current name) or its device name
    (``"acmetwo"``). The same methods, rules and errors."""
    if for_storage:
        raise NotImplementedError(
            "generate_methods_for_privateuse_backend: opdispatch has no Storage classes, so "
            "for_storage=True has nothing to generate methods for")
    _generate_methods(_privateuse_backend_name(backend), for_tensor, for_module)


def _generate_methods(custom_backend_name, for_tensor, for_module):
    if for_tensor:
        _generate_tensor_methods(custom_backend_name)
    if for_module:
        _check_tensor_method_for_module(custom_backend_name)
        module_class = getattr(_opd.nn, "Module", None)
        if module_class is not None:
            _generate_module_methods(custom_backend_name, module_class)
