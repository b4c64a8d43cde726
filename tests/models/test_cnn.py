"""The CNN of issue 32 §3 (opdispatch/_demo_models.py: conv -> batch_norm -> relu -> max_pool
-> conv -> gelu -> avg_pool -> flatten -> linear -> cross_entropy on 16x16 images), trained
with SGD and momentum: as torch, and on its own."""

from model_checks import check_loss_halves, check_trains_as_torch, needs
from opdispatch._demo_models import CNN

LR = 0.02
OPERATORS = ("conv2d", "batch_norm", "max_pool2d", "avg_pool2d", "gelu", "linear",
             "cross_entropy_loss")


@needs(*OPERATORS)
def test_cnn_trains_as_torch():
    check_trains_as_torch(CNN, LR)


@needs(*OPERATORS)
def test_cnn_loss_halves():
    check_loss_halves(CNN, LR)
