"""Models written the way users write them (float32, nn.Embedding, nn.TransformerEncoder, an
nn.Linear(D, 1) head), in the layouts users train; used by tests/test_check_model_layouts.py.
Each factory takes no arguments so that ``check-model --module tests/_torch_layouts.py:NAME``
can build it; the weights come from the state_dict it is given (or from ``seed``)."""

from __future__ import annotations

import torch
from torch import nn

N_BITS = 6


class UserModel(nn.Module):
    """Tokens 0/1 and eos 2 appended, learned positions from 0, an encoder, a head at the eos
    position. ``pos_offset`` counts positions from 1 instead (a forward the weights cannot
    reveal: the spec model read from the weights computes something else)."""

    def __init__(
        self,
        *,
        d: int = 12,
        heads: int = 2,
        layers: int = 2,
        norm_first: bool = False,
        final_norm: bool = False,
        activation: str = "relu",
        batch_first: bool = True,
        pos_offset: int = 0,
        max_len: int = N_BITS,
        seed: int = 0,
    ) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.batch_first = batch_first
        self.pos_offset = pos_offset
        self.tok = nn.Embedding(3, d)
        self.pos = nn.Embedding(max_len + 1 + pos_offset, d)
        layer = nn.TransformerEncoderLayer(
            d, heads, 2 * d, dropout=0.0, activation=activation, batch_first=batch_first,
            norm_first=norm_first, layer_norm_eps=1e-5,
        )  # fmt: skip
        norm = nn.LayerNorm(d, eps=1e-5) if final_norm else None
        self.encoder = nn.TransformerEncoder(layer, layers, norm=norm, enable_nested_tensor=False)
        self.head = nn.Linear(d, 1)

    def forward(self, bits: torch.Tensor) -> torch.Tensor:
        t = torch.cat([bits, torch.full((bits.shape[0], 1), 2)], dim=1)
        y = self.tok(t) + self.pos(torch.arange(t.shape[1]) + self.pos_offset)
        if self.batch_first:
            out = self.encoder(y)[:, -1]
        else:  # (S, B, D) through the encoder
            out = self.encoder(y.transpose(0, 1))[-1]
        return self.head(out).squeeze(-1)


class TokensModel(UserModel):
    """Takes tokens with the eos token already appended by the caller (``--module-input
    tokens``)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        y = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]) + self.pos_offset)
        return self.head(self.encoder(y)[:, -1]).squeeze(-1)


# the layouts of issue 25, with what the state_dict cannot tell (check-model's flags)
LAYOUTS: dict[str, tuple[dict, dict[str, str] | None]] = {
    # name: (UserModel kwargs, the true flags; None: the certified passes do not compute it)
    "post_ln": ({}, {"norm": "post", "final-norm": "no", "activation": "relu"}),
    "pre_ln_final": (
        {"norm_first": True, "final_norm": True},
        {"norm": "pre", "final-norm": "yes", "activation": "relu"},
    ),
    "pre_ln_no_final": (
        {"norm_first": True},
        {"norm": "pre", "final-norm": "no", "activation": "relu"},
    ),
    "post_ln_final": (
        {"final_norm": True},
        {"norm": "post", "final-norm": "yes", "activation": "relu"},
    ),
    "gelu": ({"activation": "gelu"}, {"norm": "post", "final-norm": "no", "activation": "gelu"}),
    "three_heads": (
        {"heads": 3, "norm_first": True, "final_norm": True},
        {"norm": "pre", "final-norm": "yes", "activation": "relu"},
    ),
    "batch_first_false": (
        {"batch_first": False},
        {"norm": "post", "final-norm": "no", "activation": "relu"},
    ),  # fmt: skip
}
CERTIFIABLE = {
    "post_ln", "pre_ln_final", "pre_ln_no_final", "post_ln_final", "three_heads",
    "batch_first_false",
}  # fmt: skip


def build(name: str, seed: int = 0) -> UserModel:
    """The model of layout ``name`` with weights drawn from ``seed``, in eval mode."""
    return UserModel(**LAYOUTS[name][0], seed=seed).eval()


# factories for --module (no arguments)
def post_ln() -> UserModel:
    return build("post_ln")


def pre_ln_final() -> UserModel:
    return build("pre_ln_final")


def pre_ln_no_final() -> UserModel:
    return build("pre_ln_no_final")


def post_ln_final() -> UserModel:
    return build("post_ln_final")


def gelu() -> UserModel:
    return build("gelu")


def three_heads() -> UserModel:
    return build("three_heads")


def batch_first_false() -> UserModel:
    return build("batch_first_false")
