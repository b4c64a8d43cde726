"""``opdispatch.utils.flop_counter``: FlopCounterMode, as torch 2's torch.utils.flop_counter.

A TorchDispatchMode that adds up the floating-point operations of the matrix products and
convolutions that run inside it, with torch 2's per-operator formulas (one multiply-add counts
2):

- ``mm`` (m x k @ k x n) and ``addmm``: ``2 * m * n * k``
- ``bmm`` (b x m x k @ b x k x n) and ``baddbmm``: ``2 * b * m * n * k``
- ``matmul`` and ``linear``: counted through the ``mm``/``bmm``/``addmm`` they decompose to
- ``convolution``: ``2 * batch * prod(spatial) * prod(kernel) * c_out * c_in_per_group``, the
  spatial sizes being the output's (the input's for a transposed convolution); torch's
  ``conv_flop_count``
- ``convolution_backward``: the convolutions that make the input gradient and the weight
  gradient, each by the formula above (torch's ``conv_backward_flop``)

Counts are kept per module under ``"Global"`` only: this mode tracks no ``nn.Module``
hierarchy (``mods`` is refused).
"""

from collections import defaultdict
from math import prod

from .. import ops
from ._python_dispatch import TorchDispatchMode

__all__ = ["FlopCounterMode", "register_flop_formula"]

aten = ops.aten


def _shape(t):
    return list(t.shape)


def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    m, k = a_shape
    k2, n = b_shape
    assert k == k2
    return m * n * 2 * k


def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return mm_flop(a_shape, b_shape)


def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    b, m, k = a_shape
    b2, k2, n = b_shape
    assert b == b2 and k == k2
    return b * m * n * 2 * k


def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """torch's formula: every output (input, when transposed) position of every batch element
    takes c_in * prod(kernel) multiply-adds per output channel."""
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(conv_shape) * prod(filter_size) * batch_size * c_out * c_in * 2


def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs):
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape):
    def t(shape):
        return [shape[1], shape[0]] + list(shape[2:])

    flop_count = 0
    if output_mask[0]:
        flop_count += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        if transposed:
            flop_count += conv_flop_count(t(grad_out_shape), t(x_shape), t(out_shape[1]), False)
        else:
            flop_count += conv_flop_count(t(x_shape), t(grad_out_shape), t(out_shape[1]), False)
    return flop_count


_flop_registry = {
    aten.mm: mm_flop,
    aten.addmm: addmm_flop,
    aten.bmm: bmm_flop,
    aten.baddbmm: baddbmm_flop,
    aten.convolution: conv_flop,
    aten.convolution_backward: conv_backward_flop,
}


def register_flop_formula(targets, registry=None):
    """Registers ``formula(*shapes, out_shape=...)`` for ``targets`` (packets or overloads)."""
    registry = _flop_registry if registry is None else registry

    def register(formula):
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            packet = getattr(target, "overloadpacket", target)
            registry[packet] = formula
        return formula
    return register


def _shapes_of(value):
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return _shape(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_shapes_of(v) for v in value)
    return value



class FlopCounterMode(TorchDispatchMode):
    """Counts the flops of the operators run inside it (``with FlopCounterMode() as c:``).

    ``get_total_flops()`` is the sum; ``get_flop_counts()`` maps ``"Global"`` to
    ``{operator packet: flops}`` (``opdispatch.ops.aten.mm``). With ``display=True`` the table is
    printed on exit. ``custom_mapping`` maps packets to formulas taking the arguments' shapes
    and ``out_shape``."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if mods is not None:
            raise NotImplementedError(
                "FlopCounterMode: opdispatch does not track nn.Module hierarchies; counts are "
                "kept under 'Global' only")
        self.depth = depth
        self.display = display
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.flop_registry = dict(_flop_registry)
        for target, formula in (custom_mapping or {}).items():
            self.flop_registry[getattr(target, "overloadpacket", target)] = formula

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        rows = [("Module", "FLOP", "% Total")]
        total = self.get_total_flops()
        rows.append(("Global", str(total), "100%" if total else "0%"))
        for packet, count in self.flop_counts["Global"].items():
            share = f"{100 * count / total:.2f}%" if total else "0%"
            rows.append((f" - {packet}", str(count), share))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                         for r in rows)

    def __enter__(self):
        self.flop_counts.clear()
        super().__enter__()
        return self

    def __exit__(self, *args):
        super().__exit__(*args)
        if self.display:
            print(self.get_table(self.depth))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        out = func(*args, **kwargs)
        packet = func.overloadpacket
        formula = self.flop_registry.get(packet)
        if formula is not None:
            flops = formula(*_shapes_of(tuple(args)), **_shapes_of(kwargs),
                            out_shape=_shapes_of(out))
            self.flop_counts["Global"][packet] += flops
        return out
