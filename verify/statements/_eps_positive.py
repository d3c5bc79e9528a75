"""What the eps > 0 statements (Lemma 3.1, 3.2, Cor 3.3, 3.4, Prop 3.5) share: their
hypotheses and where their derivations are written."""

from __future__ import annotations

from verify.registry import Hypothesis

DERIVATIONS = "docs/derivations.md"

EPS_POSITIVE = Hypothesis("eps > 0", "layer-norm epsilon is positive", lambda cfg: cfg.ln_eps > 0)
THETA_BOX = Hypothesis("Theta compact", "parameters in a box [-B, B]^M (B from the draw)")
