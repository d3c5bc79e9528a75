"""The Coq lemmas are the obligations' own claims (verify/proofs/coq.py): a changed claim is a
changed lemma, false claims (the twins, a halved constant) are rejected by Coq's kernel, the
untranslatable constructs are named, and `prove --coq` prints and writes the counts. The
tests that run coqc skip when it is absent."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
import sympy as sp

from verify.cli import main
from verify.proofs import coq, load
from verify.proofs.coq_terms import CoqNames, Untranslatable, coq_rel, coq_term
from verify.proofs.core import OBLIGATIONS, scratch_registry
from verify.proofs.methods import arb_step

load()
needs_coqc = pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc absent (apt coq)")

# claims the generated scripts close (one per shape: exp substituted by E = e^u in 1 and 2
# variables, sqrt with an inverse, a rational function, an AM-GM square, Rabs case splits, a
# sympy identity)
CHECKED = (
    "hr_thm_6.chi2_integrand",
    "lemma_2_9.softmax_weight_simple",
    "lemma_4_2.sequential_exp",
    "lemma_3_2.z_max",
    "lemma_4_2.sequential_shift",
    "hr_cor_5.am_gm",
    "lemma_2_9.segment_logits",
    "lemma_3_1.ln_decomposition",
)


def _with_conclusion(ob, concl, suffix: str):
    return dataclasses.replace(ob, id=f"{ob.id}.{suffix}", meta={**ob.meta, "concl": concl})


def _halved(ob):
    """The claim with its bound halved: lhs <= rhs -> lhs <= rhs / 2 (false where rhs > 0)."""
    c = ob.meta["concl"]
    return _with_conclusion(ob, c.func(c.lhs, c.rhs / 2), "halved")


def _twin(ob):
    """The claim with its weakened twin's conclusion (refuted at a checked point: false)."""
    return _with_conclusion(ob, ob.meta["twin"], "twin")


def test_a_changed_claim_changes_its_lemma() -> None:
    for name in ("lemma_4_2.sequential_shift", "lemma_4_2.sequential_exp"):
        ob = OBLIGATIONS[name]
        text, halved = coq.coq_text(ob), coq.coq_text(_halved(ob))
        assert text != halved
        statement = lambda t: t.split("Proof.")[0]  # noqa: E731
        assert statement(text) != statement(halved) and "/ 2" in statement(halved)
    # the box is part of an arb step's lemma (no registered step is a box now: a scratch one)
    t = sp.Symbol("t", real=True)
    with scratch_registry():
        ob = arb_step(
            "scratch.box",
            "H&R Thm 6",
            "box",
            "",
            {t: (0, 64)},
            sp.exp(-t) <= 1,
            sp.exp(-t) <= sp.Rational(1, 2),
        )
    wider = dataclasses.replace(ob, meta={**ob.meta, "box": {t: (0, 65)}})
    assert "t <= 64" in coq.coq_text(ob) and "t <= 65" in coq.coq_text(wider)
    # a step with exp over its whole domain states its substituted claim (E = e^t >= 1)
    text = coq.coq_text(OBLIGATIONS["hr_thm_6.chi2_integrand"])
    assert "E >= 1" in text.split("Proof.")[0] and "exp" not in text.split("Proof.")[0]


def test_translation_of_terms() -> None:
    x, y, n = sp.Symbol("x", real=True), sp.Symbol("R", real=True), sp.Symbol("n", integer=True)
    names = CoqNames([x, y, n], integers=True)
    assert names[y] == "v_R"  # R is the type of the reals: renamed
    h1 = sp.Symbol("H1", real=True)  # a name the proof scripts give a hypothesis
    assert CoqNames([h1])[h1] == "v_H1"
    assert coq_term(sp.sqrt(x + 1) / (x**2 * y), names) == "((sqrt (1 + x)) / v_R / (x ^ 2))"
    assert coq_term((x + 1) ** sp.Rational(-3, 2), names) == "(/ ((sqrt (1 + x)) ^ 3))"
    assert coq_term(sp.exp(-2 * y) + sp.Abs(x), names) == "((Rabs x) + (exp ((-2) * v_R)))"
    assert coq_term(sp.Max(x, y, 0), names).count("Rmax") == 2
    assert coq_term(n * x, names) in ("((IZR n) * x)", "(x * (IZR n))")
    assert coq_rel(sp.Le(x / 3, sp.Rational(1, 2)), names) == "(x / 3) <= (1 / 2)"
    for bad, what in (
        (x ** sp.Rational(1, 3), "exponent 1/3"),
        (x**y, "symbolic exponent"),
        (sp.ceiling(x), "ceiling"),
        (sp.gamma(x), "gamma"),
    ):
        with pytest.raises(Untranslatable, match=what):
            coq_term(bad, names)


def test_untranslatable_obligations_are_named(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    obs = [OBLIGATIONS["lemma_2_9.chain_bound"], OBLIGATIONS["small_ball.compose"]]
    res = coq.run_coq([*obs, OBLIGATIONS["lemma_3_2.z_max"]], tmp_path)
    assert [r.status for r in res] == ["untranslatable", "untranslatable", "skipped"]
    assert "chain" in res[0].detail and "exponent" in res[1].detail
    assert (tmp_path / "lemma_3_2_z_max.v").exists()  # written even without coqc


@needs_coqc
def test_false_claims_are_rejected_by_coq(tmp_path) -> None:
    """The claims are checked; each one's weakened twin and its bound halved are translated
    and Coq does not accept them (a script that proved anything would pass the first half)."""
    obs = [OBLIGATIONS[i] for i in CHECKED]
    false = [_twin(ob) for ob in obs if "twin" in ob.meta]
    false += [_halved(OBLIGATIONS[i]) for i in ("lemma_4_2.sequential_shift", "lemma_3_2.z_max")]
    res = {r.id: r for r in coq.run_coq([*obs, *false], tmp_path)}
    for ob in obs:
        assert res[ob.id].status == "checked", (ob.id, res[ob.id].detail)
    assert len(false) >= len(obs)
    for ob in false:
        assert res[ob.id].status == "not closed", (ob.id, res[ob.id].detail)


@needs_coqc
def test_prove_coq_prints_and_writes_the_counts(tmp_path, capsys) -> None:
    only = ["--only", "hr_thm_6.chi2_integrand", "--only", "lemma_3_2.z_max"]
    only += ["--only", "hr_thm_6.chi2_power"]
    assert main(["prove", *only, "--coq", "--coq-dir", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "coq: 3 obligations: checked 2 (z3 2); untranslatable 1 (sympy 1)" in out
    assert "coq untranslatable: power with a symbolic exponent 1" in out
    assert "coq checked by class: genuine 2" in out
    assert main(["prove", *only, "--coq", "--coq-dir", str(tmp_path / "b"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["coq"]["counts"] == {"checked": 2, "untranslatable": 1}
    assert doc["coq"]["by_method"]["checked"] == {"z3": 2}
    assert doc["coq"]["by_class"]["checked"] == {"genuine": 2}
    by_id = {o["id"]: o for o in doc["obligations"]}
    assert by_id["lemma_3_2.z_max"]["coq"]["status"] == "checked"
    assert "\nLemma lemma_3_2_z_max :" in (tmp_path / "b" / "lemma_3_2_z_max.v").read_text()


def test_print_assumptions_reads_every_axiom() -> None:
    """Both layouts of Print Assumptions' entries are read (one line, or the type below)."""
    out = (
        "Axioms:\nClassicalDedekindReals.sig_not_dec : forall P : Prop, {~ ~ P} + {~ P}\n"
        "ClassicalDedekindReals.sig_forall_dec\n  : forall P : nat -> Prop,\n"
        "    (forall n : nat, {P n} + {~ P n}) -> {n : nat | ~ P n} + {forall n, P n}\n"
        "VerifyLib.planted : False\n"
    )
    names = coq.print_assumptions(out)
    assert names == [
        "ClassicalDedekindReals.sig_not_dec",
        "ClassicalDedekindReals.sig_forall_dec",
        "VerifyLib.planted",
    ]
    assert not coq.STANDARD_AXIOMS.match(names[-1])


def test_prove_coq_without_coqc_says_so_once(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    only = ["--only", "lemma_3_2.z_max", "--only", "hr_thm_6.chi2_integrand"]
    assert main(["prove", *only, "--coq", "--coq-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("coq skipped: coqc not found") == 1
    assert "coq: 2 obligations: skipped 2 (z3 2)" in out
    assert (tmp_path / "lemma_3_2_z_max.v").exists()
