"""How an entry is written (not collected: the leading underscore keeps it out of the table;
unary owns neg). Copy the shape of this
module for a family (python/opdispatch/_opinfo/<family>.py); see core.py's doc for every field."""

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D


def sample_neg(op, make, dtype, requires_grad):
    yield SampleInput(make((3, 4), requires_grad=requires_grad), name="2-d")
    yield SampleInput(make((3, 4), noncontiguous=True, requires_grad=requires_grad),
                      name="strided")
    yield SampleInput(make((4, 3), requires_grad=requires_grad).t(), name="transposed")
    yield SampleInput(make((), requires_grad=requires_grad), name="0-d")
    yield SampleInput(make((0, 3)), name="empty")


def errors_neg(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="bool")), RuntimeError,
                     r"Negation, the `\-` operator, on a bool tensor is not supported")


OP_DB = [
    OpInfo("neg", inplace="neg_", dtypes=D.all, sample_inputs=sample_neg,
           error_inputs=errors_neg, compare_strides=True,
           skips={"gradgradcheck": "an example of a skip: the check's name and why"}),
]
