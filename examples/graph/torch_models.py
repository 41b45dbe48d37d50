"""The demonstration models written in PyTorch, for opval's torch.export input (docs/GRAPH.md,
"PyTorch models"): the same MLP, CNN and pre-norm transformer block as models.py, as
torch.nn.Modules with seeded weights and example inputs.

    from torch_models import transformer_block
    module, args = transformer_block()
    model, inputs = opval.torch_export.to_onnx(module, args)
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, widths=(32, 64, 64, 10)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return torch.softmax(self.layers[-1](x), -1)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))

    def forward(self, x):
        return self.body(x)


class TransformerBlock(nn.Module):
    """x + attention(layer_norm(x)), then h + mlp(layer_norm(h)) with the exact gelu."""

    def __init__(self, d_model: int = 32, heads: int = 4, d_ff: int = 64):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model, bias=False) for _ in range(4))
        self.up, self.down = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        b, t, d = x.shape
        n = self.ln1(x)

        def split(y):
            return y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(self.q(n)), split(self.k(n)), split(self.v(n))
        attention = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, -1) @ v
        h = x + self.o(attention.transpose(1, 2).reshape(b, t, d))
        return h + self.down(F.gelu(self.up(self.ln2(h))))


def _seeded(module: nn.Module, seed: int, *shape) -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(seed)
    built = module()
    return built.eval(), (torch.randn(*shape),)


def mlp(seed: int = 0):
    return _seeded(MLP, seed, 8, 32)


def cnn(seed: int = 0):
    return _seeded(CNN, seed, 2, 3, 16, 16)


def transformer_block(seed: int = 0):
    return _seeded(TransformerBlock, seed, 2, 16, 32)
