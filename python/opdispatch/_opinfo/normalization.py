"""Table entries of the normalisation operators (issue #32 §1, helper "norm"): native_layer_norm,
native_group_norm, native_batch_norm (+ their _backward operators), the fronts layer_norm,
group_norm, batch_norm, instance_norm, and PyTorch 2.x's _native_batch_norm_legit (.no_stats),
which torch 1.13 lacks (its reference is native_batch_norm).

batch_norm updates running_mean/running_var in place: its entries return them with the output
(over clones, so both libraries start from the same statistics), and the values check compares
the updated statistics too. Gradients: gradcheck on the fronts (the native forms return
statistics that are not differentiable); gradgradcheck too (Note [Differentiable norm backward])."""

import opdispatch
from .core import ErrorInput, OpInfo, SampleInput, ref_in_float32

NORM = ("float32", "float64", "bfloat16")  # torch 1.13's CPU kernels: no Half


def _aten(name, overload="default"):
    def op(lib, *args, **kwargs):
        return getattr(getattr(lib.ops.aten, name), overload)(*args, **kwargs)
    op.__name__ = f"{name}.{overload}"
    return op


# ---- layer_norm ---------------------------------------------------------------------------------

def _layer_norm_cases(make, requires_grad):
    rg = requires_grad
    yield make((2, 3, 4), requires_grad=rg), [4], make((4,), requires_grad=rg), \
        make((4,), requires_grad=rg)
    yield make((3, 5), requires_grad=rg), [5], None, None
    yield make((2, 3, 4), requires_grad=rg), [3, 4], make((3, 4), requires_grad=rg), None
    yield make((4, 6), noncontiguous=True, requires_grad=rg), [6], None, \
        make((6,), requires_grad=rg)
    yield make((5,), requires_grad=rg), [5], make((5,), requires_grad=rg), \
        make((5,), requires_grad=rg)
    yield make((0, 4)), [4], make((4,)), make((4,))


def sample_layer_norm(op, make, dtype, requires_grad):
    for x, shape, w, b in _layer_norm_cases(make, requires_grad):
        yield SampleInput(x, args=(shape, w, b), kwargs={"eps": 1e-5})
    yield SampleInput(make((2, 7), requires_grad=requires_grad), args=([7],), kwargs={"eps": 0.1})


def sample_native_layer_norm(op, make, dtype, requires_grad):
    for x, shape, w, b in _layer_norm_cases(make, False):
        yield SampleInput(x, args=(shape, w, b, 1e-5))


def sample_native_layer_norm_backward(op, make, dtype, requires_grad):
    for x, shape, w, b in _layer_norm_cases(make, False):
        _, mean, rstd = opdispatch.native_layer_norm(x, shape, w, b, 1e-5)
        dy = make(tuple(x.shape))
        yield SampleInput(dy, args=(x, shape, mean, rstd, w, b, [True, w is not None,
                                                                 b is not None]))
        yield SampleInput(dy, args=(x, shape, mean, rstd, w, b, [True, False, False]))


def errors_layer_norm(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=([4],)), RuntimeError,
                     r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got "
                     r"input of size\[2, 3\]")
    yield ErrorInput(SampleInput(make((2, 3)), args=([3], make((4,)))), RuntimeError,
                     r"Expected weight to be of same shape as normalized_shape, but got weight of "
                     r"shape \[4\] and normalized_shape = \[3\]")
    yield ErrorInput(SampleInput(make((2, 3)), args=([3], None, make((4,)))), RuntimeError,
                     r"Expected bias to be of same shape as normalized_shape, but got bias of "
                     r"shape \[4\] and normalized_shape = \[3\]")
    yield ErrorInput(SampleInput(make((2, 3)).to(opdispatch.float16), args=([3],)), RuntimeError,
                     r"\"LayerNormKernelImpl\" not implemented for 'Half'")


def errors_native_layer_norm(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=([], None, None, 1e-5)), RuntimeError,
                     r"Expected normalized_shape to be at least 1-dimensional")


# ---- group_norm ---------------------------------------------------------------------------------

def _group_norm_cases(make, requires_grad):
    rg = requires_grad
    yield make((2, 6, 3), requires_grad=rg), 3, make((6,), requires_grad=rg), \
        make((6,), requires_grad=rg)
    yield make((3, 6), requires_grad=rg), 2, None, None
    yield make((2, 4, 3, 5), requires_grad=rg), 1, make((4,), requires_grad=rg), None
    # (bias without weight: torch 1.13's backward fails, "tensor does not have a device")
    yield make((1, 4, 2, 3), requires_grad=rg), 4, make((4,), requires_grad=rg), \
        make((4,), requires_grad=rg)
    x = make((2, 3, 4, 6), requires_grad=False).contiguous(memory_format=opdispatch.channels_last)
    yield (x.requires_grad_(True) if rg else x), 3, make((3,), requires_grad=rg), None


def sample_group_norm(op, make, dtype, requires_grad):
    for x, g, w, b in _group_norm_cases(make, requires_grad):
        yield SampleInput(x, args=(g, w, b, 1e-5))
    yield SampleInput(make((2, 4, 3), noncontiguous=True, requires_grad=requires_grad),
                      args=(2,), kwargs={"eps": 0.01})


def _nchw(x):
    n, c = x.shape[0], x.shape[1]
    hxw = 1
    for s in x.shape[2:]:
        hxw *= s
    return n, c, hxw


def sample_native_group_norm(op, make, dtype, requires_grad):
    for x, g, w, b in _group_norm_cases(make, False):
        yield SampleInput(x, args=(w, b, *_nchw(x), g, 1e-5))


def sample_native_group_norm_backward(op, make, dtype, requires_grad):
    for x, g, w, b in _group_norm_cases(make, False):
        x = x.contiguous()
        _, mean, rstd = opdispatch.native_group_norm(x, w, b, *_nchw(x), g, 1e-5)
        dy = make(tuple(x.shape))
        if w is None:  # torch 1.13 fails without weight ("tensor does not have a device")
            continue
        yield SampleInput(dy, args=(x, mean, rstd, w, *_nchw(x), g, [True, True, True]))
        yield SampleInput(dy, args=(x, mean, rstd, w, *_nchw(x), g, [False, True, False]))


def errors_group_norm(op, make):
    yield ErrorInput(SampleInput(make((2, 6, 3)), args=(4,)), RuntimeError,
                     r"Expected number of channels in input to be divisible by num_groups, but "
                     r"got input of shape \[2, 6, 3\] and num_groups=4")
    yield ErrorInput(SampleInput(make((2, 6, 3)), args=(2, make((4,)))), RuntimeError,
                     r"Expected weight to be a vector of size equal to the number of channels in "
                     r"input, but got weight of shape \[4\] and input of shape \[2, 6, 3\]")
    yield ErrorInput(SampleInput(make((2, 6, 3)).to(opdispatch.float16), args=(2,)), RuntimeError,
                     r"\"GroupNormKernelImpl\" not implemented for 'Half'")


# ---- batch_norm ---------------------------------------------------------------------------------

def _stats(make, c):
    return make((c,), low=-1, high=1), make((c,), low=0.5, high=2)


def _batch_norm_cases(make, requires_grad):
    """(input, weight, bias, running_mean, running_var, training)."""
    rg = requires_grad
    rm, rv = _stats(make, 3)
    yield make((4, 3), requires_grad=rg), make((3,), requires_grad=rg), \
        make((3,), requires_grad=rg), rm, rv, True
    rm, rv = _stats(make, 3)
    yield make((2, 3, 5), requires_grad=rg), None, None, rm, rv, True
    rm, rv = _stats(make, 2)
    yield make((2, 2, 3, 3), requires_grad=rg), make((2,), requires_grad=rg), None, rm, rv, False
    yield make((3, 4, 2), requires_grad=rg), None, make((4,), requires_grad=rg), None, None, True
    rm, rv = _stats(make, 3)
    x = make((2, 3, 2, 4)).contiguous(memory_format=opdispatch.channels_last)
    yield (x.requires_grad_(True) if rg else x), make((3,), requires_grad=rg), \
        make((3,), requires_grad=rg), rm, rv, True
    rm, rv = _stats(make, 4)
    yield make((5, 4), noncontiguous=True, requires_grad=rg), None, None, rm, rv, False


def _with_stats(fn):
    """Calls fn over clones of the running statistics and returns them after the output(s)."""
    def op(lib, x, w, b, rm, rv, *args, **kwargs):
        rm = rm.clone() if rm is not None else None
        rv = rv.clone() if rv is not None else None
        out = fn(lib, x, w, b, rm, rv, *args, **kwargs)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return out + tuple(t for t in (rm, rv) if t is not None)
    return op


def sample_batch_norm(op, make, dtype, requires_grad):
    for x, w, b, rm, rv, training in _batch_norm_cases(make, requires_grad):
        yield SampleInput(x, args=(w, b, rm, rv, training, 0.1, 1e-5))
    rm, rv = _stats(make, 3)
    yield SampleInput(make((2, 3), requires_grad=requires_grad),
                      args=(None, None, rm, rv, True, 0.3, 1e-3))


def sample_batch_norm_front(op, make, dtype, requires_grad):
    for s in sample_batch_norm(op, make, dtype, requires_grad):
        yield SampleInput(s.input, args=s.args + (False,))


def sample_batch_norm_legit(op, make, dtype, requires_grad):
    for x, w, b, rm, rv, training in _batch_norm_cases(make, False):
        if rm is not None:
            yield SampleInput(x, args=(w, b, rm, rv, training, 0.1, 1e-5))


def sample_batch_norm_no_stats(op, make, dtype, requires_grad):
    for x, w, b, rm, rv, training in _batch_norm_cases(make, False):
        yield SampleInput(x, args=(w, b, True, 0.1, 1e-5))


def sample_native_batch_norm_backward(op, make, dtype, requires_grad):
    for x, w, b, rm, rv, training in _batch_norm_cases(make, False):
        if not training and rm is None:
            continue
        _, save_mean, save_invstd = opdispatch.native_batch_norm(
            x, w, b, rm.clone() if rm is not None else None,
            rv.clone() if rv is not None else None, training, 0.1, 1e-5)
        dy = make(tuple(x.shape))
        yield SampleInput(dy, args=(x, w, rm, rv, save_mean, save_invstd, training, 1e-5,
                                    [True, True, True]))
        yield SampleInput(dy, args=(x, w, rm, rv, save_mean, save_invstd, training, 1e-5,
                                    [True, False, False]))


def errors_batch_norm(op, make):
    def bn(x, rm, rv, w=None):
        return SampleInput(x, args=(w, None, rm, rv, False, 0.1, 1e-5, False))
    yield ErrorInput(bn(make((2, 3)), make((4,)), make((3,))), RuntimeError,
                     r"running_mean should contain 3 elements not 4")
    yield ErrorInput(bn(make((2, 3)), make((3,)), make((4,))), RuntimeError,
                     r"running_var should contain 3 elements not 4")
    yield ErrorInput(bn(make((2, 3)), make((3,)), make((3,)), make((4,))), RuntimeError,
                     r"weight should contain 3 elements not 4")


def errors_native_batch_norm(op, make):
    yield ErrorInput(SampleInput(make((2, 3)).to(opdispatch.float16),
                                 args=(None, None, None, None, True, 0.1, 1e-5)), RuntimeError,
                     r"\"batch_norm\" not implemented for 'Half'")
    yield ErrorInput(SampleInput(make((3,)), args=(None, None, None, None, True, 0.1, 1e-5)),
                     IndexError, r"Dimension out of range")


def _legit_ref(lib, x, w, b, rm, rv, training, momentum, eps):
    return lib.native_batch_norm(x, w, b, rm, rv, training, momentum, eps)


def _legit_no_stats_ref(lib, x, w, b, training, momentum, eps):
    return lib.native_batch_norm(x, w, b, None, None, training, momentum, eps)


# ---- instance_norm ------------------------------------------------------------------------------

def sample_instance_norm(op, make, dtype, requires_grad):
    rg = requires_grad
    rm, rv = _stats(make, 3)
    yield SampleInput(make((2, 3, 5), requires_grad=rg),
                      args=(make((3,), requires_grad=rg), make((3,), requires_grad=rg), rm, rv,
                            True, 0.1, 1e-5, False))
    yield SampleInput(make((2, 3, 2, 2), requires_grad=rg),
                      args=(None, None, None, None, True, 0.1, 1e-5, False))
    rm, rv = _stats(make, 3)
    yield SampleInput(make((2, 3, 4), requires_grad=rg),
                      args=(None, None, rm, rv, False, 0.1, 1e-5, False))


OP_DB = [
    OpInfo("layer_norm", method=False, supports_gradgrad=True, supports_out=False, dtypes=NORM,
           sample_inputs=sample_layer_norm, error_inputs=errors_layer_norm),
    OpInfo("native_layer_norm", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=sample_native_layer_norm, error_inputs=errors_native_layer_norm,
           supports_autograd=False),
    OpInfo("native_layer_norm_backward", op=_aten("native_layer_norm_backward"), method=False,
           supports_out=False, dtypes=NORM, sample_inputs=sample_native_layer_norm_backward,
           supports_autograd=False),
    OpInfo("group_norm", method=False, supports_gradgrad=True, supports_out=False, dtypes=NORM,
           sample_inputs=sample_group_norm, error_inputs=errors_group_norm),
    OpInfo("native_group_norm", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=sample_native_group_norm, supports_autograd=False),
    OpInfo("native_group_norm_backward", op=_aten("native_group_norm_backward"), method=False,
           supports_out=False, dtypes=NORM, sample_inputs=sample_native_group_norm_backward,
           supports_autograd=False),
    OpInfo("batch_norm", op=_with_stats(lambda lib, *a: lib.batch_norm(*a)), method=False,
           supports_out=False, supports_gradgrad=True, dtypes=NORM, sample_inputs=sample_batch_norm_front,
           error_inputs=errors_batch_norm),
    OpInfo("native_batch_norm", op=_with_stats(lambda lib, *a: lib.native_batch_norm(*a)),
           method=False, supports_out=False, dtypes=NORM, sample_inputs=sample_batch_norm,
           error_inputs=errors_native_batch_norm, supports_autograd=False),
    OpInfo("native_batch_norm_backward", op=_aten("native_batch_norm_backward"), method=False,
           supports_out=False, dtypes=NORM, sample_inputs=sample_native_batch_norm_backward,
           supports_autograd=False),
    OpInfo("_native_batch_norm_legit",
           op=_with_stats(lambda lib, *a: lib.ops.aten._native_batch_norm_legit(*a)
                          if lib.__name__ == "opdispatch" else _legit_ref(lib, *a)),
           method=False, supports_out=False, dtypes=NORM, sample_inputs=sample_batch_norm_legit,
           supports_autograd=False),
    OpInfo("_native_batch_norm_legit.no_stats",
           op=lambda lib, *a: (lib.ops.aten._native_batch_norm_legit.no_stats(*a)
                               if lib.__name__ == "opdispatch" else _legit_no_stats_ref(lib, *a)),
           method=False, supports_out=False, dtypes=NORM,
           sample_inputs=sample_batch_norm_no_stats, supports_autograd=False),
    OpInfo("instance_norm", op=_with_stats(lambda lib, *a: lib.instance_norm(*a)), method=False, supports_gradgrad=True,
           supports_out=False, dtypes=NORM, sample_inputs=sample_instance_norm),
]

# torch 1.13's bfloat16 kernels take some steps in bfloat16 (group_norm's per-channel scale,
# batch_norm's channels-last path), opdispatch's compute in float and round once: bfloat16
# values compare with torch's run on float32 copies, rounded.
def _bfloat16_in_float32(ref):
    widened = ref_in_float32(ref)

    def call(lib, *args, **kwargs):
        found = any(getattr(a, "dtype", None) == lib.bfloat16 for a in args)
        return (widened if found else ref)(lib, *args, **kwargs)
    return call


for _entry in OP_DB:
    _entry.ref = _bfloat16_in_float32(_entry.ref)

# Layouts for differential.py. torch 1.13's native_* kernels read weight, bias, mean and rstd as
# contiguous whatever their strides (a strided or expanded one gives torch wrong values or "tensor
# does not have a device"; group_norm and batch_norm pass them through), and its
# native_group_norm refuses a non-contiguous input: those entries get contiguous tensors (with an
# offset). The other fronts leave out "expanded": a row of one repeated value has variance 0,
# where 1/sqrt(eps) magnifies the rounding of its mean differently in the two libraries.
for _entry in OP_DB:
    if _entry.name.startswith(("native_", "_native_", "group_norm", "batch_norm")):
        _entry.layouts = ("contiguous", "offset")
    else:
        _entry.layouts = ("contiguous", "transposed", "strided", "offset")
    # float32: sums of products over a row or a channel, in another order than torch's; an
    # ill-conditioned sample (values close together, rstd large) magnifies the rounding.
    _entry.tol.setdefault("float32", (1e-4, 1e-4))
