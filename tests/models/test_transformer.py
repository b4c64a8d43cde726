"""The 2-layer character-level transformer of issue 32 §3 (opdispatch/_demo_models.py:
embeddings, layer_norm, causal self-attention from linear/split/view/transpose/matmul/
masked_fill/softmax, a gelu MLP, the output tied to the token embedding, cross_entropy), trained
with SGD and momentum: as torch, and on its own."""

from model_checks import check_loss_halves, check_trains_as_torch, needs
from opdispatch._demo_models import Transformer

LR = 0.1
OPERATORS = ("embedding", "layer_norm", "linear", "gelu", "softmax", "cross_entropy_loss")


@needs(*OPERATORS)
def test_transformer_trains_as_torch():
    check_trains_as_torch(Transformer, LR)


@needs(*OPERATORS)
def test_transformer_loss_halves():
    check_loss_halves(Transformer, LR)
