"""A model written in Hahn & Rofin's conventions (issue 40), used by tests/test_hr_models.py and
benchmarks/hr_models.py: a class with constructor arguments; token and position tables of
width D/2 concatenated; exactly ``max_len`` position rows (N rows for N bits) and no eos; a
post-LN ``nn.TransformerEncoder`` with d_ff = D; a linear head read at the last position; MSE on
0/1 targets, AdamW (lr 3e-4, weight decay 0.1); a string is labelled 1 when the output is
> 0.5."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

THRESHOLD = 0.5


class HRTransformer(nn.Module):
    def __init__(self, hidden_dim: int, num_attn_heads: int, num_layers: int, max_len: int):
        super().__init__()
        self.word_embedding = nn.Embedding(2, hidden_dim // 2)
        self.position_embedding = nn.Embedding(max_len, hidden_dim // 2)
        layer = nn.TransformerEncoderLayer(
            hidden_dim, num_attn_heads, dim_feedforward=hidden_dim, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.output = nn.Linear(hidden_dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pos = self.position_embedding(torch.arange(x.shape[1]))
        y = torch.cat([self.word_embedding(x), pos.expand(x.shape[0], -1, -1)], dim=-1)
        return self.output(self.encoder(y)[:, -1]).squeeze(-1)


TARGETS = {
    "parity": lambda x: x.sum(1) % 2,
    "majority": lambda x: (2 * x.sum(1) > x.shape[1]).long(),
    "first": lambda x: x[:, 0],
}


def train(
    function: str,
    n: int,
    d: int,
    heads: int = 2,
    layers: int = 2,
    steps: int = 300,
    batch: int = 64,
    lr: float = 3e-4,
    seed: int = 0,
) -> HRTransformer:
    """H&R's recipe: MSE on 0/1 targets, AdamW(lr, weight decay 0.1), fresh uniform strings."""
    torch.manual_seed(seed)
    model = HRTransformer(d, heads, layers, n)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    for _ in range(steps):
        x = torch.randint(0, 2, (batch, n))
        loss = ((model(x) - TARGETS[function](x).float()) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def predictions(model: nn.Module, n: int) -> np.ndarray:
    """The model's own labels (output > 0.5, float32) on all 2^n strings, index order of
    model-spec (x_1 the least significant bit)."""
    idx = np.arange(1 << n)
    bits = torch.from_numpy(((idx[:, None] >> np.arange(n)) & 1).astype(np.int64))
    with torch.no_grad():
        return (model(bits) > THRESHOLD).numpy().astype(np.int8)
