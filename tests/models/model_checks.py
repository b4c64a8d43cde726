"""Shared by the model tests: the operators a model needs, as an xfail mark while one has no
kernel yet (another change adds it), and the two checks of issue 32 §3."""

import numpy as np
import pytest

import opdispatch as opd
from opdispatch import _demo_models as models

try:
    import torch
except ImportError:  # the comparison needs torch; the halving check does not
    torch = None

STEPS = 40


def missing_operators(*names):
    has = opd._C._dispatch_has_kernel_for_dispatch_key
    keys = ("CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd")
    runnable = {q[len("aten::"):].split(".")[0] for q in opd._C._dispatch_get_all_op_names()
                if q.startswith("aten::") and any(has(q, k) for k in keys)}
    return [n for n in names if n not in runnable]


def needs(*names):
    missing = missing_operators(*names)
    return pytest.mark.xfail(bool(missing), strict=True,
                             reason=f"aten::{', '.join(missing)} not in opdispatch yet")


def check_trains_as_torch(model_class, lr):
    """Every loss of STEPS steps within 1e-3 + 1e-2 * |torch's| of torch's, from the same
    parameters and batches."""
    if torch is None:
        pytest.skip("python3-torch is not installed")
    model = model_class()
    batches = model.batches(STEPS)
    theirs = models.train(torch, model, STEPS, lr, batches=batches)
    ours = models.train(opd, model, STEPS, lr, batches=batches)
    np.testing.assert_allclose(ours, theirs, rtol=1e-2, atol=1e-3)


def check_loss_halves(model_class, lr):
    """Without torch: the mean loss of the last 5 steps is at most half the first step's."""
    losses = models.train(opd, model_class(), STEPS, lr)
    assert np.isfinite(losses).all()
    assert np.mean(losses[-5:]) <= losses[0] / 2, losses
