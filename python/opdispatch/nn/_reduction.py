"""The reduction argument of the losses, as ``torch.nn._reduction``: the strings 'none', 'mean'
and 'sum' become the operators' ``int reduction`` (aten's Reduction enum: None 0, Mean 1, Sum 2),
and the legacy ``size_average``/``reduce`` pair becomes a string, with torch's warnings."""

import warnings

_ENUM = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction):
    """The enum value of a reduction string; ValueError (torch's text) for an unknown one."""
    value = _ENUM.get(reduction)
    if value is not None:
        return value
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated, please use reduction='mean' "
                      "instead.")
        return 1
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction string that the deprecated pair means (each None counts as True): reduce
    False is 'none', else size_average picks 'mean' over 'sum'."""
    if reduce is None or reduce:
        reduction = "mean" if size_average is None or size_average else "sum"
    else:
        reduction = "none"
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.")
    return reduction


def legacy_get_enum(size_average, reduce, emit_warning=True):
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
