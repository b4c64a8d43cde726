"""The Python part of the demo (``python3 -m opdispatch.demo``, run by ``tools/dev demo``): the
seed's ``z = x + y`` traced hop by hop, a custom operator defined with ``@custom_op`` and
``register_fake`` run on cpu and meta, and a kernel hot-swapped inside a ``with`` block."""

import opdispatch as opd
from opdispatch.library import custom_op
from opdispatch.testing import override_kernel


def main():
    print("== z = x + y, hop by hop (the seed's add)")
    x = opd.tensor([[1., 2., 3.]], requires_grad=True)
    y = opd.ones(2, 3)
    with opd.trace() as t:
        z = x + y
    print(t)
    print("z =", z)

    print("\n== @custom_op with register_fake, on cpu and meta")

    @custom_op("demo::my_gelu", mutates_args=())
    def my_gelu(x: opd.Tensor) -> opd.Tensor:
        return x * opd.sigmoid(1.702 * x)

    @my_gelu.register_fake
    def _(x):
        return opd.empty_like(x)

    print(opd.ops.demo.my_gelu.default._schema)
    print("cpu: ", my_gelu(opd.tensor([-1., 0., 1.])))
    print("meta:", my_gelu(opd.empty(2, 3, device="meta")))

    print("\n== a kernel hot-swapped for a with block")
    a = opd.tensor([1., 2.])
    print("before:", a + a)
    with override_kernel("aten::add.Tensor", "CPU", lambda s, o, alpha=1: opd.mul(s, o)):
        print("inside (add served by a Python kernel that multiplies):", a + a)
    print("after: ", a + a)
    my_gelu._destroy()


if __name__ == "__main__":
    main()
