"""What the eps = 0 statements share (Lemma 4.2, Cor 4.3, Lemma 4.4, Thm 4.5, Cor 4.6, Conj 5.5
and the in-action checks of Cor 5.1-5.4): the hypothesis eps = 0, the derivation document and
the confidence level of their Clopper-Pearson intervals.

The statements are *reconstructions* (docs/reference/paper-2606.08768.md); the explicit
constants are this toolkit's own, derived in docs/derivations_eps_zero.md. Conventions: K =
config.n_norms layer norms on the path (2L post-LN), beta = prod over the K norms of max_n
(1 + z) (model-spec), eps = 0, Theta = [-B, B]^M (theta ~ init "uniform").
"""

from __future__ import annotations

from verify.registry import Hypothesis

CONFIDENCE = 0.95  # of every Clopper-Pearson interval reported by the eps = 0 checks
DERIVATION = "docs/derivations_eps_zero.md"
EPS_ZERO = Hypothesis("eps = 0", "layer-norm epsilon is zero", lambda cfg: cfg.ln_eps == 0)
