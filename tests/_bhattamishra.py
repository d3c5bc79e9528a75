"""A transformer classifier written from the description of Bhattamishra et al.'s public code
("Simplicity Bias in Transformers and their Ability to Learn Sparse Boolean Functions") in
/work/shared/engineering-notes.md, not from their code: the annotated transformer's classes.

- ``LayerNorm``: a_2 (x - mean) / (std + eps) + b_2 with torch's *unbiased* std and eps = 1e-6
  added to the std (``form="torch"`` gives torch's formula with the same names, for the second
  layer-norm form);
- ``MultiHeadedAttention``: four separate ``linears`` (q, k, v, out);
- pre-LN sublayers (``x + sublayer(norm(x))``) and a final norm after the last layer;
- ``Embeddings``: ``lut(x) * sqrt(D)``, token ids end = 0, pad = 1, '0' = 2, '1' = 3;
- learned positions ``pe`` of shape (400, 1, D), added to the sequence-first input;
- a 2-class ``decoder`` read at the end token (the last position of each sequence),
  prediction = argmax (ties: class 0, torch.argmax's first index);
- ``forward(src, lengths)``: src (S, B) token ids, sequence first.

Factories without arguments for ``check-model --module tests/_bhattamishra.py:NAME``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

END, PAD, ZERO, ONE = 0, 1, 2, 3
D_MODEL, N_HEADS, D_FFN, N_LAYERS = 8, 2, 16, 2


class LayerNorm(nn.Module):
    def __init__(self, features: int, eps: float = 1e-6, form: str = "annotated") -> None:
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.eps = eps
        self.form = form

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(-1, keepdim=True)
        if self.form == "torch":
            var = ((x - mean) ** 2).mean(-1, keepdim=True)
            return self.a_2 * (x - mean) / torch.sqrt(var + self.eps) + self.b_2
        std = x.std(-1, keepdim=True)
        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2


class MultiHeadedAttention(nn.Module):
    def __init__(self, h: int, d_model: int) -> None:
        super().__init__()
        self.d_k, self.h = d_model // h, h
        self.linears = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(4)])

    def forward(self, query, key, value):
        nb = query.size(0)
        q, k, v = [
            lin(x).view(nb, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip(self.linears, (query, key, value), strict=False)
        ]
        p = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), dim=-1)
        x = (p @ v).transpose(1, 2).contiguous().view(nb, -1, self.h * self.d_k)
        return self.linears[-1](x)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w_2(torch.relu(self.w_1(x)))


class SublayerConnection(nn.Module):
    def __init__(self, size: int, form: str) -> None:
        super().__init__()
        self.norm = LayerNorm(size, form=form)

    def forward(self, x, sublayer):
        return x + sublayer(self.norm(x))


class EncoderLayer(nn.Module):
    def __init__(self, size: int, h: int, d_ff: int, form: str) -> None:
        super().__init__()
        self.self_attn = MultiHeadedAttention(h, size)
        self.feed_forward = PositionwiseFeedForward(size, d_ff)
        self.sublayer = nn.ModuleList([SublayerConnection(size, form) for _ in range(2)])

    def forward(self, x):
        x = self.sublayer[0](x, lambda y: self.self_attn(y, y, y))
        return self.sublayer[1](x, self.feed_forward)


class Encoder(nn.Module):
    def __init__(self, size: int, h: int, d_ff: int, n: int, form: str) -> None:
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(size, h, d_ff, form) for _ in range(n)])
        self.norm = LayerNorm(size, form=form)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class Embeddings(nn.Module):
    def __init__(self, vocab: int, d_model: int) -> None:
        super().__init__()
        self.lut, self.d_model = nn.Embedding(vocab, d_model), d_model

    def forward(self, x):
        return self.lut(x) * math.sqrt(self.d_model)


class LearnedPositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 400) -> None:
        super().__init__()
        self.pe = nn.Parameter(0.1 * torch.randn(max_len, 1, d_model))

    def forward(self, x):  # (S, B, D)
        return x + self.pe[: x.size(0)]


class TransformerCLF(nn.Module):
    """Sequence-first classifier: forward(src (S, B) ids, lengths (B,)) -> (B, 2) logits."""

    def __init__(self, form: str = "annotated", d_model: int = D_MODEL) -> None:
        super().__init__()
        self.encoder = Embeddings(4, d_model)
        self.pos_encoder = LearnedPositionalEncoding(d_model)
        self.transformer_encoder = Encoder(d_model, N_HEADS, D_FFN, N_LAYERS, form)
        self.decoder = nn.Linear(d_model, 2)

    def forward(self, src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.pos_encoder(self.encoder(src)).transpose(0, 1)  # (B, S, D)
        x = self.transformer_encoder(x)
        return self.decoder(x[torch.arange(x.size(0)), lengths - 1])


def annotated_model() -> TransformerCLF:
    return TransformerCLF("annotated")


def torch_form_model() -> TransformerCLF:
    return TransformerCLF("torch")


class Wrapper(nn.Module):
    """Their classifier inside a wrapper (state_dict names ``model.*``; ``--prefix model.``)."""

    def __init__(self) -> None:
        super().__init__()
        self.model = TransformerCLF("annotated")

    def forward(self, src, lengths):
        return self.model(src, lengths)


def source(bits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(src (S, B), lengths) for a (B, N) 0/1 tensor: ids '0' = 2, '1' = 3, end = 0 appended."""
    ids = torch.where(bits == 1, ONE, ZERO)
    ids = torch.cat([ids, torch.full((bits.shape[0], 1), END)], dim=1)
    return ids.t().contiguous(), torch.full((bits.shape[0],), ids.shape[1])


def train(model: TransformerCLF, n_bits: int, subset: list[int], steps: int, seed: int = 0):
    """Cross-entropy on m-sparse parity of the (1-based) ``subset``, Adam; returns the model."""
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    idx = torch.tensor([i - 1 for i in subset])
    for _ in range(steps):
        x = torch.randint(0, 2, (128, n_bits))
        y = x[:, idx].sum(1) % 2
        loss = nn.functional.cross_entropy(model(*source(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()
