"""Facts checked, not cited (issue 42): a hypothesis that stands for another obligation's
conclusion names it with an explicit substitution (``uses=``), and the discharge checks that
the domain gives the cited premises at that instance and that the cited conclusion there gives
the hypothesis."""

from __future__ import annotations

import sympy as sp

from verify.proofs import load
from verify.proofs.core import OBLIGATIONS, scratch_registry
from verify.proofs.methods import Use, check_uses, z3_step

load()

z, z2, d, g, e = sp.symbols("z z' d g e", real=True)
HM = 2 * z * z2 / (z + z2)


def _step(hyp, use: Use, hyps=None):
    with scratch_registry():
        ob = z3_step(
            "attempt.use",
            "Lemma 2.9",
            "attempt",
            "",
            hyps if hyps is not None else [z > 0, z2 > 0, g >= 0, e >= 0, d <= g * HM * e, hyp],
            sp.Le(d, g * sp.sqrt(z * z2) * e / 2),
            sp.Le(d, g * sp.sqrt(z * z2) * e / 4),
            uses=(use,),
        )
        return ob.prove()


def test_a_halved_fact_is_not_an_instance_of_the_cited_step() -> None:
    """Issue 42's halving of the layer-norm factor, through the harmonic mean: the hypothesis
    H <= sqrt(z z')/2 cited as lemma_2_9.hm_le_gm does not follow from it."""
    halved = HM <= sp.sqrt(z * z2) / 2
    v = _step(halved, Use("lemma_2_9.hm_le_gm", {"z": z, "z'": z2}, halved))
    assert v.status == "failed" and "does not give" in v.detail


def test_a_use_needs_every_symbol_and_its_premises() -> None:
    fact = HM <= sp.sqrt(z * z2)
    v = _step(fact, Use("lemma_2_9.hm_le_gm", {"z": z}, fact))
    assert v.status == "failed" and "no instance given for z'" in v.detail
    # the cited step needs z, z' > 0: a domain with z' >= -1 does not give it
    hyps = [z > 0, z2 >= -1, g >= 0, e >= 0, d <= g * HM * e, fact]
    v = _step(fact, Use("lemma_2_9.hm_le_gm", {"z": z, "z'": z2}, fact), hyps)
    assert v.status == "failed" and "premise" in v.detail


def test_a_use_cannot_justify_itself() -> None:
    """The hypothesis a use stands for is left out of the domain its premises must follow
    from: y > 0 cited from lemma_3_2.z_max, whose premise is y > 0, is not self-justified."""
    x, y = sp.symbols("x y", real=True)
    own = y > 0
    v = check_uses([x >= 0, own], [Use("lemma_3_2.z_max", {"var": x, "epsilon": y}, own)])
    assert v is not None and "premise" in v.detail
    fact = (x + y) ** sp.Rational(-1, 2) <= y ** sp.Rational(-1, 2)
    ok = check_uses([x >= 0, y > 0, fact], [Use("lemma_3_2.z_max", {"var": x, "epsilon": y}, fact)])
    assert ok is None


def test_the_linked_steps_hold_and_list_their_uses() -> None:
    linked = {k: ob for k, ob in OBLIGATIONS.items() if ob.meta.get("uses")}
    assert {
        "lemma_2_9.ln_factor",
        "trivial_bounds.output_swing",
        "trivial_bounds.readout_swing",
        "lemma_3_1.centred_entry",
        "lemma_3_1.ln_step",
        "lemma_3_2.per_layer_factor",
        "cor_3_3.compose",
        "cor_4_3.per_flip",
        "hr_cor_5.required_blowup",
    } <= set(linked)
    for ob in linked.values():
        hyps = ob.meta["hyps"] if "hyps" in ob.meta else ob.meta["use_hyps"]
        assert check_uses(hyps, ob.meta["uses"]) is None, ob.id
        for u in ob.meta["uses"]:
            assert u.fact in ob.facts and u.fact in ob.claim
