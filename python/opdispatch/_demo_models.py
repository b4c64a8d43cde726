"""The two reference models of issue 32 (tests/models/ and the demo): a small CNN and a 2-layer
character-level transformer, written once over a namespace ``lib`` that is ``torch`` or
``opdispatch`` (with ``lib.nn.functional`` as ``F``), so that both libraries run the same code.

Parameters and data are made with numpy from a seed, then handed to the library, so the two
libraries start from the same numbers and see the same batches. Training is plain SGD with
momentum written by hand over ``lib.autograd.grad``; ``train`` returns the loss of every step.
"""

import importlib
import math

import numpy as np


def functional(lib):
    """``lib.nn.functional``, imported (``import opdispatch`` alone does not import ``nn``)."""
    return importlib.import_module(lib.__name__ + ".nn.functional")


def _uniform(rng, fan_in, *shape):
    bound = 1.0 / math.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def _linear(params, rng, name, fan_in, fan_out):
    params[name + ".w"] = _uniform(rng, fan_in, fan_out, fan_in)
    params[name + ".b"] = _uniform(rng, fan_in, fan_out)


def _norm(params, name, size):
    params[name + ".w"], params[name + ".b"] = np.ones(size, np.float32), np.zeros(size, np.float32)


def _to_lib(lib, arrays, requires_grad):
    return {name: lib.from_numpy(np.array(a, copy=True)).requires_grad_(requires_grad)
            for name, a in arrays.items()}


# ---- the CNN: conv -> batch_norm -> relu -> max_pool -> conv -> gelu -> avg_pool -> flatten
# -> linear -> cross_entropy, on 16x16 images ----


class CNN:
    """Images (N, 3, 16, 16) of ``classes`` classes: each class a fixed random pattern, each
    image its class's pattern plus twice as strong a noise."""

    def __init__(self, seed=0, channels=(8, 16), classes=4, batch=16):
        rng = np.random.default_rng(seed)
        c1, c2 = channels
        self.params = {
            "conv1.w": _uniform(rng, 3 * 9, c1, 3, 3, 3), "conv1.b": _uniform(rng, 3 * 9, c1),
            "bn.w": np.ones(c1, np.float32), "bn.b": np.zeros(c1, np.float32),
            "conv2.w": _uniform(rng, c1 * 9, c2, c1, 3, 3), "conv2.b": _uniform(rng, c1 * 9, c2),
            "fc.w": _uniform(rng, c2 * 16, classes, c2 * 16),
            "fc.b": _uniform(rng, c2 * 16, classes),
        }
        self.buffers = {"bn.mean": np.zeros(c1, np.float32), "bn.var": np.ones(c1, np.float32)}
        self.patterns = rng.standard_normal((classes, 3, 16, 16)).astype(np.float32)
        self.classes, self.batch, self.rng = classes, batch, rng

    def batches(self, steps):
        """``steps`` (images, labels) numpy pairs, drawn from the model's seed."""
        out = []
        for _ in range(steps):
            labels = self.rng.integers(0, self.classes, self.batch)
            noise = 2 * self.rng.standard_normal((self.batch, 3, 16, 16)).astype(np.float32)
            out.append((self.patterns[labels] + noise, labels.astype(np.int64)))
        return out

    def bind(self, lib):
        """(parameters, buffers) as tensors of ``lib``: parameters require grad."""
        return _to_lib(lib, self.params, True), _to_lib(lib, self.buffers, False)

    @staticmethod
    def loss(lib, p, b, images, labels):
        F = functional(lib)
        x = F.conv2d(images, p["conv1.w"], p["conv1.b"], padding=1)
        x = F.batch_norm(x, b["bn.mean"], b["bn.var"], p["bn.w"], p["bn.b"], training=True)
        x = F.max_pool2d(F.relu(x), 2)
        x = F.conv2d(x, p["conv2.w"], p["conv2.b"], padding=1)
        x = F.avg_pool2d(F.gelu(x), 2)
        logits = F.linear(x.flatten(1), p["fc.w"], p["fc.b"])
        return F.cross_entropy(logits, labels)


# ---- the transformer: token + position embeddings, 2 blocks of causal self-attention and a
# gelu MLP (pre-norm), a final layer_norm and the output tied to the token embedding ----

TEXT = "the cat sat on the mat. " * 12


class Transformer:
    def __init__(self, seed=0, text=TEXT, block=16, embed=32, heads=4, layers=2, batch=8):
        rng = np.random.default_rng(seed)
        self.chars = sorted(set(text))
        self.data = np.array([self.chars.index(c) for c in text], np.int64)
        vocab, c = len(self.chars), embed
        p = {"wte": (0.02 * rng.standard_normal((vocab, c))).astype(np.float32),
             "wpe": (0.02 * rng.standard_normal((block, c))).astype(np.float32)}
        for i in range(layers):
            _norm(p, f"h{i}.ln1", c)
            _linear(p, rng, f"h{i}.attn", c, 3 * c)
            _linear(p, rng, f"h{i}.proj", c, c)
            _norm(p, f"h{i}.ln2", c)
            _linear(p, rng, f"h{i}.fc", c, 4 * c)
            _linear(p, rng, f"h{i}.fc2", 4 * c, c)
        _norm(p, "lnf", c)
        self.params = p
        self.block, self.embed, self.heads, self.layers = block, embed, heads, layers
        self.batch = batch
        self.rng = rng

    def batches(self, steps):
        """``steps`` (inputs, targets) numpy pairs of (batch, block) character indices, the
        targets the inputs shifted by one."""
        out = []
        for _ in range(steps):
            starts = self.rng.integers(0, len(self.data) - self.block - 1, self.batch)
            x = np.stack([self.data[s:s + self.block] for s in starts])
            y = np.stack([self.data[s + 1:s + self.block + 1] for s in starts])
            out.append((x, y))
        return out

    def bind(self, lib):
        """(parameters, buffers): the buffers hold the causal mask and the positions."""
        mask = np.triu(np.ones((self.block, self.block), np.bool_), 1)
        buffers = {"mask": lib.from_numpy(mask), "pos": lib.arange(self.block)}
        return _to_lib(lib, self.params, True), buffers

    def loss(self, lib, p, b, idx, targets):
        F = functional(lib)
        batch, t = idx.shape
        c, h = self.embed, self.heads
        x = F.embedding(idx, p["wte"]) + F.embedding(b["pos"][:t], p["wpe"])
        mask = b["mask"][:t, :t]
        for i in range(self.layers):
            y = F.layer_norm(x, (c,), p[f"h{i}.ln1.w"], p[f"h{i}.ln1.b"])
            q, k, v = F.linear(y, p[f"h{i}.attn.w"], p[f"h{i}.attn.b"]).split(c, dim=2)
            q, k, v = (z.view(batch, t, h, c // h).transpose(1, 2) for z in (q, k, v))
            att = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(c // h))
            att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
            y = att.matmul(v).transpose(1, 2).contiguous().view(batch, t, c)
            x = x + F.linear(y, p[f"h{i}.proj.w"], p[f"h{i}.proj.b"])
            y = F.layer_norm(x, (c,), p[f"h{i}.ln2.w"], p[f"h{i}.ln2.b"])
            y = F.gelu(F.linear(y, p[f"h{i}.fc.w"], p[f"h{i}.fc.b"]))
            x = x + F.linear(y, p[f"h{i}.fc2.w"], p[f"h{i}.fc2.b"])
        x = F.layer_norm(x, (c,), p["lnf.w"], p["lnf.b"])
        logits = F.linear(x, p["wte"])  # tied to the token embedding
        return F.cross_entropy(logits.view(batch * t, -1), targets.reshape(batch * t))


# ---- training ----


class Trainer:
    """One model bound to one library: ``step(inputs, targets)`` runs the forward, the backward
    and an SGD-with-momentum update (buf = momentum * buf + grad; param -= lr * buf)."""

    def __init__(self, lib, model, lr, momentum=0.9):
        self.lib, self.model, self.lr, self.momentum = lib, model, lr, momentum
        self.params, self.buffers = model.bind(lib)
        self.names = list(self.params)
        self.velocity = [lib.zeros_like(self.params[n]) for n in self.names]

    def step(self, inputs, targets):
        lib = self.lib
        loss = self.model.loss(lib, self.params, self.buffers, inputs, targets)
        grads = lib.autograd.grad(loss, [self.params[n] for n in self.names])
        with lib.no_grad():
            for name, grad, buf in zip(self.names, grads, self.velocity):
                buf.mul_(self.momentum).add_(grad)
                self.params[name].sub_(buf, alpha=self.lr)
        return loss

    def data(self, batches):
        """numpy batches as tensors of this library."""
        return [(self.lib.from_numpy(x), self.lib.from_numpy(y)) for x, y in batches]


def train(lib, model, steps, lr, momentum=0.9, batches=None):
    """The loss (a float) of each of ``steps`` steps of a fresh Trainer on ``model``'s batches
    (drawn now unless given, so that two libraries can share them)."""
    if batches is None:
        batches = model.batches(steps)
    trainer = Trainer(lib, model, lr, momentum)
    return [float(trainer.step(x, y).item()) for x, y in trainer.data(batches)]
