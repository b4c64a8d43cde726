"""Table entries for the operators that came before issue #31 and that no family owns: views,
cat, softmax and its private forms, the losses, copy_/fill_/zero_, conversions and factories.
(mm/bmm/addmm/matmul/linear are python's; sum/mean/amax/amin/argmax/max.dim reductions';
unary, binary and comparison operators their families'.)"""

import opdispatch
from .core import (ErrorInput, OpInfo, SampleInput, aten_op, method_op, ref_in_float32,
                         dtypes as D)

ALL = D.all_and_bool + D.complex
SOFTMAX_DTYPES = ("float32", "float64", "bfloat16")  # torch 1.13's CPU softmax: no Half




def _aten_out(name, out_name="out"):
    """lib.ops.aten.<name>.default, or its .out overload when called with `out_name`=."""
    def op(lib, *args, **kwargs):
        overload = "out" if out_name in kwargs else "default"
        return getattr(getattr(lib.ops.aten, name), overload)(*args, **kwargs)
    op.__name__ = name
    return op


def _nn(name):
    """opdispatch.<name>, torch._C._nn.<name>: the aten loss operators with int reductions."""
    def op(lib, *args, **kwargs):
        fn = getattr(lib._C._nn, name) if lib.__name__ == "torch" else getattr(lib, name)
        return fn(*args, **kwargs)
    op.__name__ = name
    return op


def _cloned(name):
    """The in-place method `name` applied to a clone of self: a function form to compare."""
    def op(lib, self, *args, **kwargs):
        return getattr(self.clone(), name)(*args, **kwargs)
    op.__name__ = name
    return op


# ---- views -----------------------------------------------------------------------------------

def _x(make, shape, rg, **kw):
    return make(shape, requires_grad=rg, **kw)


def sample_view(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3, 4), rg), args=([6, 4],))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=([-1],))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=([2, -1, 2],))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=([3, 2, 2],))
    yield SampleInput(_x(make, (), rg), args=([1, 1],))
    yield SampleInput(_x(make, (1,), rg), args=([],))
    yield SampleInput(_x(make, (0, 3), rg), args=([3, 0, 1],))


def errors_view(op, make):
    yield ErrorInput(SampleInput(make((3, 4)).t(), args=([-1],)), RuntimeError,
                     r"view size is not compatible with input tensor's size and stride")
    yield ErrorInput(SampleInput(make((3, 4)), args=([5],)), RuntimeError,
                     r"shape '\[5\]' is invalid for input of size 12")


def sample_reshape(op, make, dtype, rg):
    yield from sample_view(op, make, dtype, rg)
    yield SampleInput(_x(make, (4, 3), rg).t(), args=([-1],))
    yield SampleInput(_x(make, (3, 1), rg).expand(3, 4), args=([2, 6],))


def sample_as_strided(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=([2, 2], [1, 2]))
    yield SampleInput(_x(make, (3, 4), rg), args=([2, 3], [4, 1], 1))
    yield SampleInput(_x(make, (3, 4), rg), args=([3, 2], [0, 1]))
    yield SampleInput(_x(make, (3, 4), rg), args=([], [], 5))
    yield SampleInput(_x(make, (3, 4), rg), args=([0, 2], [1, 1]))


def errors_as_strided(op, make):
    yield ErrorInput(SampleInput(make((3, 4)), args=([3, 4], [4, 2])), RuntimeError,
                     r"setStorage: sizes \[3, 4\], strides \[4, 2\], storage offset 0, and "
                     r"itemsize \d+ requiring a storage size of \d+ are out of bounds for "
                     r"storage of size \d+")


def sample_transpose(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(0, 1))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(0, 2))
    yield SampleInput(_x(make, (2, 3, 4), rg, noncontiguous=True), args=(-1, 0))
    yield SampleInput(_x(make, (3, 4), rg), args=(1, 1))
    yield SampleInput(_x(make, (), rg), args=(0, -1))
    yield SampleInput(_x(make, (0, 3), rg), args=(0, 1))


def errors_dim_out_of_range(args):
    def errors(op, make):
        yield ErrorInput(SampleInput(make((3, 4)), args=args), IndexError,
                         r"Dimension out of range \(expected to be in range of \[-2, 1\], "
                         r"but got 2\)")
    return errors


def sample_t(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True))
    yield SampleInput(_x(make, (5,), rg))
    yield SampleInput(_x(make, (), rg))
    yield SampleInput(_x(make, (0, 2), rg))


def errors_t(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4))), RuntimeError,
                     r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D")


def sample_permute(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3, 4), rg), args=([2, 0, 1],))
    yield SampleInput(_x(make, (2, 3, 4), rg, noncontiguous=True), args=([-1, 0, 1],))
    yield SampleInput(_x(make, (3, 4), rg), args=([0, 1],))
    yield SampleInput(_x(make, (), rg), args=([],))
    yield SampleInput(_x(make, (0, 2, 1), rg), args=([1, 2, 0],))


def errors_permute(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([0, 1, 1],)), RuntimeError,
                     r"permute\(\): duplicate dims are not allowed\.")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([0, 1],)), RuntimeError,
                     r"number of dimensions in the tensor input does not match the length of "
                     r"the desired ordering of dimensions i\.e\. input\.dim\(\) = 3 is not "
                     r"equal to len\(dims\) = 2")


def sample_expand(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 1), rg), args=([3, 4],))
    yield SampleInput(_x(make, (3, 1), rg), args=([2, 3, 4],))
    yield SampleInput(_x(make, (3, 1), rg), args=([-1, 4],))
    yield SampleInput(_x(make, (1, 4), rg, noncontiguous=True), args=([3, 4],))
    yield SampleInput(_x(make, (), rg), args=([2, 2],))
    yield SampleInput(_x(make, (1, 0), rg), args=([3, 0],))


def errors_expand(op, make):
    yield ErrorInput(SampleInput(make((3, 1)), args=([5, 4],)), RuntimeError,
                     r"The expanded size of the tensor \(5\) must match the existing size \(3\) "
                     r"at non-singleton dimension 0\.  Target sizes: \[5, 4\]\.  Tensor sizes: "
                     r"\[3, 1\]")


def sample_squeeze(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 1, 4), rg), args=(1,))
    yield SampleInput(_x(make, (3, 1, 4), rg), args=(0,))
    yield SampleInput(_x(make, (3, 1, 4), rg, noncontiguous=True), args=(-2,))
    yield SampleInput(_x(make, (), rg), args=(0,))
    yield SampleInput(_x(make, (1, 0), rg), args=(0,))


def sample_unsqueeze(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(0,))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(2,))
    yield SampleInput(_x(make, (3, 4), rg), args=(-1,))
    yield SampleInput(_x(make, (), rg), args=(0,))
    yield SampleInput(_x(make, (0,), rg), args=(1,))


def sample_slice(op, make, dtype, rg):
    yield SampleInput(_x(make, (5, 4), rg), args=(0, 1, 4))
    yield SampleInput(_x(make, (5, 4), rg), args=(1, 0, 4, 2))
    yield SampleInput(_x(make, (5, 4), rg, noncontiguous=True), args=(1, -3, None, 2))
    yield SampleInput(_x(make, (5, 4), rg), args=(0, 3, 100))
    yield SampleInput(_x(make, (5, 4), rg), args=(0, 4, 2))
    yield SampleInput(_x(make, (5, 4), rg), args=(-1,), kwargs={"start": 1, "step": 3})


def errors_slice(op, make):
    yield ErrorInput(SampleInput(make((5, 4)), args=(0, 0, 4, 0)), RuntimeError,
                     r"slice step must be positive")


def sample_select(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(0, 1))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(1, -1))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(-2, 2))
    yield SampleInput(_x(make, (3,), rg), args=(0, 2))
    yield SampleInput(_x(make, (2, 0), rg), args=(0, 1))


def errors_select(op, make):
    yield ErrorInput(SampleInput(make((3, 4)), args=(0, 5)), IndexError,
                     r"select\(\): index 5 out of range for tensor of size \[3, 4\] at "
                     r"dimension 0")


def sample_flatten(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3, 4), rg))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(1, 2))
    yield SampleInput(_x(make, (2, 3, 4), rg, noncontiguous=True), args=(0, 1))
    yield SampleInput(_x(make, (4, 3), rg).t(), args=(0, -1))
    yield SampleInput(_x(make, (), rg))
    yield SampleInput(_x(make, (2, 0, 3), rg), args=(1,))


def sample_unary_layouts(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True))
    yield SampleInput(_x(make, (4, 3), rg).t())
    yield SampleInput(_x(make, (3, 1), rg).expand(3, 4))
    yield SampleInput(_x(make, (), rg))
    yield SampleInput(_x(make, (0, 3), rg))


# ---- cat -------------------------------------------------------------------------------------

def sample_cat(op, make, dtype, rg):
    yield SampleInput([_x(make, (2, 3), rg), _x(make, (4, 3), rg)])
    yield SampleInput([_x(make, (2, 3), rg), _x(make, (2, 1), rg, noncontiguous=True)],
                      args=(1,))
    yield SampleInput([_x(make, (2, 3), rg), _x(make, (3, 2), rg).t(), _x(make, (2, 3), rg)],
                      args=(-2,))
    yield SampleInput([_x(make, (2, 3), rg), _x(make, (0,), rg)], name="legacy [0] input")
    yield SampleInput([_x(make, (0, 3), rg), _x(make, (0, 3), rg)], args=(0,))
    yield SampleInput([_x(make, (2, 3, 4), rg)], args=(2,))
    yield SampleInput((_x(make, (1, 4), rg), _x(make, (2, 4), rg)), kwargs={"dim": 0})


def errors_cat(op, make):
    yield ErrorInput(SampleInput([make((2, 3)), make((3, 2))], args=(1,)), RuntimeError,
                     r"Sizes of tensors must match except in dimension 1\. Expected size 2 but "
                     r"got size 3 for tensor number 1 in the list\.")
    yield ErrorInput(SampleInput([make((2, 3)), make((2,))], args=(0,)), RuntimeError,
                     r"Tensors must have same number of dimensions: got 2 and 1")
    yield ErrorInput(SampleInput([make((2, 3))], args=(2,)), IndexError,
                     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)")


# ---- softmax ---------------------------------------------------------------------------------

def sample_softmax(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(1,))
    yield SampleInput(_x(make, (3, 4), rg), args=(0,))
    yield SampleInput(_x(make, (2, 3, 4), rg, noncontiguous=True), args=(-1,))
    yield SampleInput(_x(make, (4, 3), rg).t(), args=(1,))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(1,))
    yield SampleInput(_x(make, (), rg), args=(0,))
    yield SampleInput(_x(make, (0, 3), rg), args=(1,))
    if op.function_name in ("softmax", "log_softmax") and dtype != "float64":
        yield SampleInput(_x(make, (3, 4), rg), args=(1,), kwargs={"dtype": "float64"})


def sample_private_softmax(op, make, dtype, rg):
    for s in sample_softmax(op, make, dtype, rg):
        yield SampleInput(s.input, args=s.args + (False,))


def errors_softmax(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(2,)), IndexError,
                     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)")


def errors_private_softmax(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(1, True)), RuntimeError,
                     r"conversion is (not )?supported")


# ---- losses ----------------------------------------------------------------------------------

def _target(make, shape, classes):
    return make(shape, low=0, high=classes, dtype_override="int64")


def sample_nll_loss(op, make, dtype, rg):
    # Reductions given: torch 1.13's torch._C._nn binding reads the schema's default `Mean`
    # as 0 (none); the operator's default is mean, which opdispatch takes.
    yield SampleInput(_x(make, (3, 5), rg), args=(_target(make, (3,), 5), None, 1))
    for reduction in (0, 1, 2):
        yield SampleInput(_x(make, (4, 3), rg), args=(_target(make, (4,), 3), None, reduction))
    yield SampleInput(_x(make, (4, 3), rg), args=(_target(make, (4,), 3), make((3,), low=0.1),
                                                  1))
    yield SampleInput(_x(make, (4, 3), rg, noncontiguous=True),
                      args=(_target(make, (4,), 3), None, 1, 1))
    yield SampleInput(_x(make, (5,), rg), args=(_target(make, (), 5), None, 1))
    yield SampleInput(_x(make, (0, 3), rg), args=(_target(make, (0,), 3), None, 2))


def errors_nll_loss(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2,), low=5, high=6,
                                                          dtype_override="int64"),)),
                     IndexError, r"Target 5 is out of bounds\.", on_meta=False)
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((3,), low=0, high=2,
                                                          dtype_override="int64"),)),
                     RuntimeError, r"size mismatch \(got input: \[2, 3\], target: \[3\]\)")
    # aten::nll_loss is 1-d or 2-d (torch's F.nll_loss sends spatial inputs to nll_loss_nd /
    # nll_loss2d, Operators II); a values sample before, which gradcheck ran with OPD_OPINFO_FULL.
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=(_target(make, (2, 4), 3), None, 0)),
                     RuntimeError, r"input tensor should be 1D or 2D")


def sample_cross_entropy(op, make, dtype, rg):
    yield from sample_nll_loss(op, make, dtype, rg)
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(_target(make, (2, 4), 3), None, 0))
    yield SampleInput(_x(make, (4, 3), rg), args=(_target(make, (4,), 3), None, 1, -100, 0.2))
    yield SampleInput(_x(make, (4, 3), rg), args=(make((4, 3), low=0, high=1), None, 1),
                      name="probabilities")


def sample_mse_loss(op, make, dtype, rg):
    for reduction in (0, 1, 2):
        yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (3, 4), rg), reduction))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(_x(make, (4, 3), rg).t(), 1))
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (4,), rg), 0), name="broadcast")
    yield SampleInput(_x(make, (), rg), args=(_x(make, (), rg), 2))
    yield SampleInput(_x(make, (0, 2), rg), args=(_x(make, (0, 2), rg), 1))


def errors_mse_loss(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((3, 2)),)), RuntimeError,
                     r"The size of tensor a \(3\) must match the size of tensor b \(2\) at "
                     r"non-singleton dimension 1")


# ---- the backward operators of softmax and the losses -----------------------------------------

def sample_softmax_backward(op, make, dtype, rg):
    forward = opdispatch.log_softmax if op.name.startswith("_log") else opdispatch.softmax
    cases = (((3, 4), 1, False), ((3, 4), 0, False), ((2, 3, 4), -1, False), ((3, 4), 1, True),
             ((2, 3, 4), 1, True), ((), 0, False), ((0, 3), 1, False))
    for shape, dim, transposed in cases:
        output = forward(make(shape), dim).detach()
        if transposed:  # the same values, column-major: torch 1.13 misreads these (see ref)
            output = output.t().contiguous().t() if len(shape) == 2 else \
                output.transpose(0, 2).contiguous().transpose(0, 2)
        yield SampleInput(make(shape, requires_grad=rg), args=(output, dim, dtype),
                          name="non-contiguous output" if transposed else "")


def ref_softmax_backward(name):
    """torch 1.13's _softmax_backward_data reads a non-contiguous `output` as if it were
    contiguous (wrong values); opdispatch follows the mathematics, so the reference is torch's
    on a contiguous copy of `output`."""
    def ref(lib, grad_output, output, dim, input_dtype, **kwargs):
        return _aten_out(name, "grad_input" if name.startswith("_softmax") else "out")(
            lib, grad_output, output.contiguous(), dim, input_dtype, **kwargs)
    return ref


def _loss_case(make, rg, n, c, reduction, weighted, ignore_index=-100):
    x = make((n, c), requires_grad=rg)
    weight = make((c,), low=0.1) if weighted else None
    return x, _target(make, (n,), c), weight, reduction, ignore_index


def sample_nll_loss_forward(op, make, dtype, rg):
    for reduction in (0, 1, 2):
        yield SampleInput(*_loss_case(make, rg, 4, 3, reduction, False)[:1],
                          args=_loss_case(make, rg, 4, 3, reduction, False)[1:])
    x, t, w, r, i = _loss_case(make, rg, 4, 3, 1, True, ignore_index=1)
    yield SampleInput(x, args=(t, w, r, i), name="weight, ignore_index")
    yield SampleInput(make((5,), requires_grad=rg), args=(_target(make, (), 5), None, 1, -100))
    yield SampleInput(make((0, 3), requires_grad=rg), args=(_target(make, (0,), 3), None, 1,
                                                            -100), name="empty mean")


def sample_nll_loss_backward(op, make, dtype, rg):
    for reduction, weighted in ((0, False), (1, False), (2, True), (1, True)):
        x, t, w, r, i = _loss_case(make, False, 4, 3, reduction, weighted)
        out, total_weight = opdispatch.ops.aten.nll_loss_forward(x, t, w, r, i)
        yield SampleInput(make(list(out.shape), requires_grad=rg),
                          args=(x, t, w, r, i, total_weight))


def sample_mse_loss_backward(op, make, dtype, rg):
    for reduction in (0, 1, 2):
        x = make((3, 4), requires_grad=rg)
        grad = make(() if reduction else (3, 4), requires_grad=rg)
        yield SampleInput(grad, args=(x, make((3, 4), requires_grad=rg), reduction))
    yield SampleInput(make((), requires_grad=rg),
                      args=(make((3, 4), noncontiguous=True, requires_grad=rg),
                            make((4, 3), requires_grad=rg).t(), 1))


# ---- copy_, fill_, zero_, conversions --------------------------------------------------------

def sample_copy(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (3, 4), rg),))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(_x(make, (4, 3), rg).t(),))
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (4,), rg),), name="broadcast")
    yield SampleInput(_x(make, (3, 4), rg), args=(make((3, 4), dtype_override="float64"),),
                      name="from float64")
    yield SampleInput(_x(make, (3, 4), rg), args=(make((3, 4), dtype_override="int32"),),
                      name="from int32")
    yield SampleInput(_x(make, (3, 4), rg), args=(make((3, 4), dtype_override="bool"),),
                      name="from bool")
    yield SampleInput(_x(make, (), rg), args=(_x(make, (), rg),))
    yield SampleInput(_x(make, (0, 3), rg), args=(_x(make, (0, 3), rg),))


def errors_copy(op, make):
    yield ErrorInput(SampleInput(make((3, 4)), args=(make((3, 5)),)), RuntimeError,
                     r"The size of tensor a \(4\) must match the size of tensor b \(5\) at "
                     r"non-singleton dimension 1")


def sample_fill(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(2,))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(True,))
    yield SampleInput(_x(make, (4, 3), rg).t(), args=(0,))
    yield SampleInput(_x(make, (), rg), args=(1,))
    yield SampleInput(_x(make, (0, 3), rg), args=(5,))
    if dtype not in D.integral + ("bool",):
        yield SampleInput(_x(make, (2, 3), rg), args=(-2.5,))


def errors_fill(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="uint8"), args=(300,)), RuntimeError,
                     r"value cannot be converted to type uint8_t without overflow")


def sample_zero(op, make, dtype, rg):
    yield from sample_unary_layouts(op, make, dtype, rg)


def sample_to(op, make, dtype, rg):
    targets = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool",
               "complex64")
    if rg:  # gradcheck: a narrower type's rounding is no derivative
        targets = ("float64",)
    for i, target in enumerate(targets):
        noncontiguous = i % 2 == 1
        yield SampleInput(_x(make, (3, 4), rg, noncontiguous=noncontiguous), args=(target,))
    yield SampleInput(_x(make, (4, 3), rg).t(), args=("float64",))
    yield SampleInput(_x(make, (), rg), args=("int64",))
    yield SampleInput(_x(make, (0, 3), rg), args=("float32",))
    if not rg:
        yield SampleInput(_x(make, (3, 4), rg), args=(dtype,), name="same dtype")


def sample_to_copy(op, make, dtype, rg):
    for s in sample_to(op, make, dtype, rg):
        yield SampleInput(s.input, kwargs={"dtype": s.args[0]}, name=s.name)
    yield SampleInput(_x(make, (4, 3), rg).t(), name="keeps strides")


# ---- factories -------------------------------------------------------------------------------

def sample_sized_factory(op, make, dtype, rg):
    for size in ([2, 3], [], [0, 4], [5]):
        yield SampleInput(size, kwargs={"dtype": dtype})


def sample_full(op, make, dtype, rg):
    value = True if dtype == "bool" else 3 if dtype in D.integral else -1.5
    for size in ([2, 3], [], [0, 4]):
        yield SampleInput(size, args=(value,), kwargs={"dtype": dtype})


def sample_arange(op, make, dtype, rg):
    yield SampleInput(0, args=(5,), kwargs={"dtype": dtype})
    yield SampleInput(1, args=(10, 3), kwargs={"dtype": dtype})
    yield SampleInput(10, args=(1, -2), kwargs={"dtype": dtype})
    yield SampleInput(3, args=(3,), kwargs={"dtype": dtype})
    if dtype in D.floating:
        yield SampleInput(0.5, args=(3.2, 0.3), kwargs={"dtype": dtype})


def sample_like(op, make, dtype, rg):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((4, 3)).t(), name="keeps strides")
    yield SampleInput(make((3, 4), noncontiguous=True))
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)))
    yield SampleInput(make((3, 4)), kwargs={"dtype": "float64" if dtype != "float64" else
                                            "int32"})


def sample_full_like(op, make, dtype, rg):
    value = True if dtype == "bool" else 2
    for s in sample_like(op, make, dtype, rg):
        yield SampleInput(s.input, args=(value,), kwargs=s.kwargs, name=s.name)


def errors_arange(op, make):
    yield ErrorInput(SampleInput(0, args=(5, 0)), RuntimeError, r"step must be nonzero")
    yield ErrorInput(SampleInput(0, args=(5, -1)), RuntimeError,
                     r"upper bound and larger bound inconsistent with step sign")


_VIEW = dict(supports_out=False, dtypes=ALL)

OP_DB = [
    OpInfo("view", op=method_op("view"), method=False, sample_inputs=sample_view,
           error_inputs=errors_view, **_VIEW),
    OpInfo("reshape", sample_inputs=sample_reshape, error_inputs=None, **_VIEW),
    OpInfo("as_strided", sample_inputs=sample_as_strided, error_inputs=errors_as_strided,
           skips={"differential": "reads the storage, which another layout changes"}, **_VIEW),
    OpInfo("transpose", sample_inputs=sample_transpose,
           error_inputs=errors_dim_out_of_range((0, 2)), **_VIEW),
    OpInfo("t", sample_inputs=sample_t, error_inputs=errors_t, **_VIEW),
    OpInfo("permute", sample_inputs=sample_permute, error_inputs=errors_permute, **_VIEW),
    OpInfo("expand", op=method_op("expand"), method=False, sample_inputs=sample_expand,
           error_inputs=errors_expand, **_VIEW),
    OpInfo("squeeze.dim", sample_inputs=sample_squeeze,
           error_inputs=errors_dim_out_of_range((2,)), **_VIEW),
    OpInfo("unsqueeze", sample_inputs=sample_unsqueeze, **_VIEW),
    OpInfo("slice", op=aten_op("slice", "Tensor"), method=False, sample_inputs=sample_slice,
           error_inputs=errors_slice, **_VIEW),
    OpInfo("select", sample_inputs=sample_select, error_inputs=errors_select, **_VIEW),
    OpInfo("flatten", sample_inputs=sample_flatten, **_VIEW),
    OpInfo("contiguous", op=method_op("contiguous"), method=False,
           sample_inputs=sample_unary_layouts, **_VIEW),
    OpInfo("clone", sample_inputs=sample_unary_layouts, **_VIEW),
    OpInfo("cat", method=False, supports_out=False, dtypes=ALL, sample_inputs=sample_cat,
           error_inputs=errors_cat),
    OpInfo("softmax", dtypes=SOFTMAX_DTYPES, supports_out=False, sample_inputs=sample_softmax,
           error_inputs=errors_softmax, tol={"bfloat16": (1e-2, 2e-2)}),
    OpInfo("log_softmax", dtypes=SOFTMAX_DTYPES, supports_out=False,
           sample_inputs=sample_softmax, error_inputs=errors_softmax,
           tol={"bfloat16": (2e-2, 2e-2)}),
    OpInfo("_softmax", method=False, dtypes=SOFTMAX_DTYPES,
           sample_inputs=sample_private_softmax, error_inputs=errors_private_softmax),
    OpInfo("_log_softmax", method=False, dtypes=SOFTMAX_DTYPES,
           sample_inputs=sample_private_softmax, error_inputs=errors_private_softmax,
           tol={"bfloat16": (2e-2, 2e-2)}),
    # torch 1.13 sums bfloat16 losses in bfloat16; opdispatch in double, rounding once.
    OpInfo("nll_loss", op=_nn("nll_loss"), ref=ref_in_float32(_nn("nll_loss")), method=False,
           supports_out=False, dtypes=SOFTMAX_DTYPES, sample_inputs=sample_nll_loss,
           error_inputs=errors_nll_loss),
    OpInfo("cross_entropy_loss", op=_nn("cross_entropy_loss"), method=False,
           supports_out=False, dtypes=SOFTMAX_DTYPES, sample_inputs=sample_cross_entropy,
           tol={"bfloat16": (5e-2, 2e-2)}),
    OpInfo("mse_loss", op=_nn("mse_loss"), method=False, supports_out=False,
           dtypes=("float32", "float64", "float16"), sample_inputs=sample_mse_loss,
           error_inputs=errors_mse_loss),
    OpInfo("_softmax_backward_data", op=_aten_out("_softmax_backward_data", "grad_input"),
           ref=ref_softmax_backward("_softmax_backward_data"), method=False,
           out_name="grad_input", dtypes=SOFTMAX_DTYPES, sample_inputs=sample_softmax_backward,
           # torch 1.13 rounds sum(g * y) to bfloat16 (its Vectorized<BFloat16> arithmetic) before
           # g - sum cancels; opdispatch keeps float: differences of a bfloat16 step of the sum.
           tol={"bfloat16": (6e-2, 2e-2)}),
    OpInfo("_log_softmax_backward_data", op=_aten_out("_log_softmax_backward_data"),
           ref=ref_softmax_backward("_log_softmax_backward_data"), method=False,
           dtypes=SOFTMAX_DTYPES, sample_inputs=sample_softmax_backward,
           tol={"bfloat16": (5e-2, 2e-2)}),
    OpInfo("nll_loss_forward", op=aten_op("nll_loss_forward", "default"),
           ref=ref_in_float32(aten_op("nll_loss_forward", "default")), method=False,
           supports_out=False, dtypes=SOFTMAX_DTYPES, sample_inputs=sample_nll_loss_forward),
    OpInfo("nll_loss_backward", op=aten_op("nll_loss_backward", "default"), method=False,
           supports_out=False, dtypes=SOFTMAX_DTYPES, sample_inputs=sample_nll_loss_backward),
    OpInfo("mse_loss_backward", op=aten_op("mse_loss_backward", "default"), method=False,
           supports_out=False, dtypes=("float32", "float64"),  # torch 1.13: no Half backward
           sample_inputs=sample_mse_loss_backward),
    OpInfo("copy_", op=_cloned("copy_"), method=False, inplace="copy_", supports_out=False,
           dtypes=ALL, sample_inputs=sample_copy, error_inputs=errors_copy),
    OpInfo("fill_", op=_cloned("fill_"), method=False, inplace="fill_", supports_out=False,
           dtypes=ALL, sample_inputs=sample_fill, error_inputs=errors_fill),
    OpInfo("zero_", op=_cloned("zero_"), method=False, inplace="zero_", supports_out=False,
           dtypes=ALL, sample_inputs=sample_zero),
    OpInfo("to.dtype", op=method_op("to"), method=False, supports_out=False, dtypes=ALL,
           sample_inputs=sample_to),
    OpInfo("_to_copy", op=aten_op("_to_copy", "default"), method=False, supports_out=False, dtypes=ALL,
           sample_inputs=sample_to_copy),
    OpInfo("zeros", method=False, supports_out=False, supports_autograd=False, dtypes=ALL,
           is_factory=True, sample_inputs=sample_sized_factory),
    OpInfo("ones", method=False, supports_out=False, supports_autograd=False, dtypes=ALL,
           is_factory=True, sample_inputs=sample_sized_factory),
    OpInfo("full", method=False, supports_out=False, supports_autograd=False, dtypes=ALL,
           is_factory=True, sample_inputs=sample_full),
    OpInfo("arange", method=False, supports_out=False, supports_autograd=False,
           dtypes=D.all, is_factory=True, sample_inputs=sample_arange,
           error_inputs=errors_arange),
    OpInfo("zeros_like", method=False, supports_out=False, supports_autograd=False,
           dtypes=ALL, sample_inputs=sample_like),
    OpInfo("ones_like", method=False, supports_out=False, supports_autograd=False,
           dtypes=ALL, sample_inputs=sample_like),
    OpInfo("full_like", method=False, supports_out=False, supports_autograd=False,
           dtypes=ALL, sample_inputs=sample_full_like),
]

# Second derivatives too, for every differentiable entry here.
for _op in OP_DB:
    if _op.supports_autograd:
        _op.supports_gradgrad = True
