"""The Python part of the demo (``python3 -m opdispatch.demo``, run by ``tools/dev demo``): the
seed's ``z = x + y`` traced hop by hop, a custom operator defined with ``@custom_op`` and
``register_fake`` run on cpu and meta, a kernel hot-swapped inside a ``with`` block, and the
character-level transformer of ``opdispatch._demo_models`` trained for a few seconds with
``opdispatch.nn.functional``, its loss curve printed."""

import time

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

    print()
    train_transformer()


TEXT = ("the quick brown fox jumps over the lazy dog. a stitch in time saves nine. all that "
        "glitters is not gold. to be or not to be, that is the question. ") * 4


def train_transformer(seconds=5.0, max_steps=400, every=25):
    """Trains the 2-layer transformer (SGD with momentum) on TEXT until ``seconds`` or
    ``max_steps``, printing the loss every ``every`` steps as a bar."""
    from opdispatch import _demo_models as models
    model = models.Transformer(text=TEXT, block=32, embed=48, batch=16)
    print(f"== a 2-layer character-level transformer, opdispatch.nn.functional, {seconds:g} s "
          f"(text {model.data.size} characters, vocabulary {len(model.chars)}, "
          f"embedding {model.embed}, {model.heads} heads, batch {model.batch}x{model.block})")
    try:
        trainer = models.Trainer(opd, model, lr=0.1)
        batches = trainer.data(model.batches(max_steps))
        start, first = time.perf_counter(), None
        for step, (x, y) in enumerate(batches):
            loss = trainer.step(x, y).item()
            first = loss if first is None else first
            elapsed = time.perf_counter() - start
            last = step + 1 == max_steps or elapsed > seconds
            if step % every == 0 or last:
                bar = "#" * max(1, round(40 * loss / first))
                print(f"step {step:4d}  loss {loss:6.3f}  {bar}")
            if last:
                break
    except (AttributeError, NotImplementedError, RuntimeError) as e:
        # An operator this build lacks (the neural-network operators are plugins' kernels).
        print(f"not available in this build: {type(e).__name__}: {str(e).splitlines()[0]}")
        return
    print(f"{step + 1} steps in {elapsed:.1f} s ({1e3 * elapsed / (step + 1):.0f} ms a step)")


if __name__ == "__main__":
    main()
