"""General forms (issue 42): the steps once checked at one size (D = 3, k = 1..3, K = 4, ...)
hold for every size, each proved with its twin refuted, classed genuine, and a planted wrong
factor fails it."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from verify.proofs import aggregates as agg
from verify.proofs import (
    corollaries,
    coverage_random,
    eps_zero_lemma_4_4,
    finite_products,
    layer_norm_jacobian,
    load,
)
from verify.proofs.core import OBLIGATIONS, discharge, scratch_registry
from verify.proofs.status import INSTANCE, obligation_class

load()

GENERAL = (
    "lemma_3_1.ln_jacobian",
    "small_ball.variance_projection",
    "lemma_4_4.slice_quadratic",
    "lemma_4_4.gram_det",
    "lemma_3_2.product",
    "lemma_4_2.union_threshold",
    "lemma_4_4.volume_average",
    "trivial_bounds.function_count",
    "sec_6_random_functions.neighbourhoods",
    "sec_6_random_functions.biased_mean",
)


@pytest.mark.parametrize("ob_id", GENERAL)
def test_the_general_form_is_proved_its_twin_refuted_and_it_is_genuine(ob_id: str) -> None:
    out = discharge(OBLIGATIONS[ob_id])
    assert out.verdict.status == "proved", out.verdict.detail
    assert out.twin.status == "refuted" and out.twin.point
    assert ob_id not in INSTANCE and obligation_class(OBLIGATIONS[ob_id]) == "genuine"
    assert "every" in OBLIGATIONS[ob_id].claim


def test_power_mean_has_no_instance_left() -> None:
    assert "thm_4_5.power_mean_instance" not in OBLIGATIONS
    assert obligation_class(OBLIGATIONS["thm_4_5.power_mean"]) == "genuine"


def test_aggregates_are_the_sums_they_stand_for() -> None:
    vec = [Fraction(3), Fraction(-1, 2), Fraction(2), Fraction(5, 2), Fraction(-4)]
    pt = agg.realise(vec)
    assert pt[agg.D] == 5 and pt[agg.R] == sum(vec[2:]) and pt[agg.Q] == sum(v * v for v in vec[2:])
    cube = agg.sum_all(agg.X**2 - 3 * agg.X + 1)
    exact = {k: sp.Rational(v.numerator, v.denominator) for k, v in pt.items()}
    assert cube.subs(exact) == sum(v * v - 3 * v + 1 for v in vec)
    with pytest.raises(ValueError, match="degree 3"):
        agg.sum_rest(agg.X**3)


def _attempt(identities: dict, twin: tuple, **kw) -> str:
    with scratch_registry():
        ob = agg.aggregate_step("attempt.general", "Lemma 3.1", "attempt", "", "attempt",
                                identities, twin, **kw)  # fmt: skip
        return discharge(ob).verdict.status


def test_a_planted_wrong_factor_in_the_jacobian_fails() -> None:
    m = layer_norm_jacobian
    twin = ("twin", m._j12, m._z * m._p12)
    kw = {"extra": {m.S: (1, 4)}, "domain": m.S**2 > m._var}
    assert _attempt({"J_12": (m._j12, m._off(m._g2))}, twin, **kw) == "proved"
    half = m._z * (m._p12 - m._g1 * m._g2 / (2 * m.D))  # g g^T/(2D)
    assert _attempt({"J_12": (m._j12, half)}, twin, **kw) == "failed"
    # the eigenvalue on g without its factor eps/(var + eps)
    jg = m._j11 * m._g1 + m._j12 * m._g2 + agg.sum_rest(m._off(m._gx) * m._gx)
    assert _attempt({"(J g)_1": (jg, m._z * m._g1)}, twin, **kw) == "failed"


def test_a_planted_wrong_variance_fails() -> None:
    mean = agg.sum_all(agg.X, 0) / agg.D
    lhs = agg.sum_all(agg.X**2, 0) / agg.D - mean**2
    wrong = agg.sum_all((agg.X - mean) ** 2, 0) / (agg.D - 1)  # Bessel's D - 1
    assert _attempt({"var": (lhs, wrong)}, ("twin", lhs, 2 * lhs), explicit=0) == "failed"


def test_a_planted_wrong_hessian_fails() -> None:
    mean = agg.sum_all(agg.X) / agg.D
    h = sp.hessian(agg.sum_all((agg.X - mean) ** 2), (agg.X1, agg.X2)) / 2
    assert _attempt({"H_12": (h[0, 1], -1 / (2 * agg.D))}, ("twin", h[0, 1], 0)) == "failed"


def test_a_planted_wrong_gram_determinant_fails(monkeypatch) -> None:
    m = eps_zero_lemma_4_4
    monkeypatch.setattr(m, "GRAM_DET", 1 - m.K_SLICE / (2 * m.D_GRAM))
    assert OBLIGATIONS["lemma_4_4.gram_det"].prove().status == "failed"


def test_a_planted_wrong_power_in_the_product_fails(monkeypatch) -> None:
    m = sp.Symbol("m", real=True)
    monkeypatch.setattr(finite_products, "_power", lambda b, k: b**k / 2)
    with scratch_registry():
        ob = finite_products.product_bound(
            "attempt.product", "Lemma 3.2", "a", "", 1 + m, (m >= 0,)
        )
        out = discharge(ob)
    assert out.verdict.status == "failed" and out.verdict.point  # at K = 4: tau = 1, m = 0


def test_a_planted_wrong_volume_average_fails() -> None:
    from verify.proofs.positions import sum_induction

    w, q, b, tw, ts = sp.symbols("w q B W Sigma", real=True)
    with scratch_registry():
        ob = sum_induction(
            "attempt.average", "Lemma 4.4", "a", "", terms=(w, q), term_hyps=(w >= 0, q <= b),
            sums={tw: w, ts: w * q}, invariant=(ts <= tw * b,), final=(sp.Eq(tw, 1),),
            concl=sp.Le(ts, b / 2), twin=sp.Le(ts, b / 4),
        )  # fmt: skip
        assert discharge(ob).verdict.status == "failed"


def test_a_planted_wrong_function_count_fails(monkeypatch) -> None:
    monkeypatch.setattr(corollaries, "N_FUNCTIONS", 2 ** (2**corollaries.nb - 1))
    assert OBLIGATIONS["trivial_bounds.function_count"].prove().status == "failed"


def test_a_planted_wrong_neighbourhood_count_fails(monkeypatch) -> None:
    right = coverage_random.meet
    monkeypatch.setattr(coverage_random, "meet", lambda n, d: right(n, d) + (d == 2))
    assert OBLIGATIONS["sec_6_random_functions.neighbourhoods"].prove().status == "failed"


def test_a_planted_wrong_biased_mean_fails(monkeypatch) -> None:
    n, p = coverage_random.nn_, coverage_random.pp
    monkeypatch.setattr(coverage_random, "BIASED", 2**n * (p ** (n + 1) + (1 - p) ** n))
    assert OBLIGATIONS["sec_6_random_functions.biased_mean"].prove().status == "failed"


def test_the_series_instances_cover_every_grid_the_toolkit_runs() -> None:
    from verify.proofs.eps_zero_thm_4_5 import series_grid
    from verify.statements.cor_4_6 import D_MODEL, N_LAYERS
    from verify.statements.thm_4_5 import SERIES_GRID

    used = {(a[0], a[1]) for level in SERIES_GRID for a in level} | {(D_MODEL, N_LAYERS)}
    assert set(series_grid()) == used and (128, 1) in used
    detail = OBLIGATIONS["thm_4_5.series_order"].prove().detail
    assert all(f"(D, L) = {g}" in detail for g in used)
    assert "series_order" in " ".join(k for k in INSTANCE if k.startswith("thm_4_5."))
