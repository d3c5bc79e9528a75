"""Prop 3.5 of arXiv 2606.08768 (a reconstruction, docs/derivations.md): the cap
|F_N| <= (1 + C_Lip diam(Theta) / xi)^M on the number of functions recognised with margin xi
over a parameter box, from Lemma 3.1's C_Lip over the box (:func:`verify.theory.bounds.c_lip_box`).

Like :mod:`verify.theory.bounds`, every factor is a module-level function looked up at call time
(:func:`packing_radius`), so that a mutation test can weaken it with ``monkeypatch.setattr``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from verify.model import ModelConfig, n_params, param_shapes
from verify.theory.bounds import c_lip_box
from verify.theory.norms import box_half_widths
from verify.validation import check_real

__all__ = ["diameter", "log10_prop_3_5", "packing_radius"]


def diameter(config: ModelConfig, box: float | Mapping[str, float]) -> float:
    """Prop 3.5: the Euclidean diameter of the box, 2 sqrt(sum_name B_name^2 size_name)
    (= 2 B sqrt(M))."""
    bb = box_half_widths(config, box)
    shapes = param_shapes(config)
    return 2.0 * math.sqrt(sum(bb[k] ** 2 * int(np.prod(s)) for k, s in shapes.items()))


def packing_radius(c_lip_value: float, xi: float) -> float:
    """Prop 3.5, step 1: r = xi / C_Lip. Two parameters within 2r of each other change T by
    less than 2 xi on every input (Lemma 3.1), so they cannot recognise different functions
    with margin xi; a maximal r-separated set is an r-net with one function per point."""
    return xi / c_lip_value


def log10_prop_3_5(config: ModelConfig, box: float | Mapping[str, float], xi: float) -> float:
    """Prop 3.5: log10 of the cap M log10(1 + diam(Theta) / r) on |F_N| (any N), with the
    packing radius r = xi / C_Lip (:func:`packing_radius`), i.e. (1 + C_Lip diam / xi)^M."""
    xi = check_real("xi", xi, strictly_positive=True)
    m = n_params(config)
    r = packing_radius(c_lip_box(config, box), xi)
    return m * math.log10(1.0 + diameter(config, box) / r)
