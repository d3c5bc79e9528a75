"""The Numba kernel (plain and with rigorous radius) against arb enclosures of T."""

from __future__ import annotations

import itertools

import _per_string_reference as ref
import numpy as np
import pytest
from flint import arb

from verify.model import ModelConfig, forward, init_params
from verify.model.arithmetic.contexts import MidRadContext, arb_precision
from verify.model.generic.enclosure import enclose_output
from verify.model.generic.reference import run_generic
from verify.model.per_string.per_string_pass import fast_T, prepare

OPTIONS = list(
    itertools.product([False, True], [True, False], ["add", "concat"], ["sinusoidal", "learned"])
)


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    p = init_params(ModelConfig(d_model=4, n_layers=1, n_heads=1), "gaussian", seed=0)
    fast_T(p, np.zeros((1, 2), dtype=np.uint8))


@pytest.mark.parametrize(("norm_first", "eos", "embedding", "pos"), OPTIONS)
def test_kernel_matches_reference_and_encloses_it(
    norm_first: bool, eos: bool, embedding: str, pos: str
) -> None:
    for n_layers, eps in ((1, 0.0), (2, 1e-5), (3, 0.0)):
        cfg = ModelConfig(
            d_model=8, n_layers=n_layers, n_heads=2, norm_first=norm_first, eos=eos,
            embedding=embedding, pos_encoding=pos, ln_eps=eps, max_len=8,
            ln_affine=n_layers != 3,
        )  # fmt: skip
        p = init_params(cfg, "gaussian", seed=n_layers, scale=0.7)
        bits = np.random.default_rng(n_layers).integers(0, 2, size=(3, 5))
        exact = enclose_output(p, bits, prec=128)  # arb balls of radius ~1e-30 around T_exact
        t, r = fast_T(p, bits)
        t_plain, r_plain = fast_T(p, bits, bounds=False)
        assert np.array_equal(t, t_plain) and np.all(r_plain == 0)
        np.testing.assert_allclose(t, forward(p, bits).T, rtol=1e-12, atol=1e-13)
        with arb_precision(128):
            for b in range(3):
                assert abs(float(exact[b].mid()) - t[b]) <= 1e-12 * max(1.0, abs(t[b]))
                # the kernel's ball [t - r, t + r] contains the exact value's ball
                assert arb(t[b]) - arb(r[b]) <= exact[b] <= arb(t[b]) + arb(r[b]), (t[b], r[b])
        # the kernel's radius is at least that of an independent implementation of its rules
        # (tests/_per_string_reference.py: the same midpoints bit for bit), so no term is lost
        t_ref, r_ref = ref.certified_T(prepare(p, bits.shape[1]), bits.astype(np.uint8))
        assert np.array_equal(t, t_ref)
        assert np.all(r >= r_ref * (1 - ref.REL)), (r, r_ref)
        # for information: the generic numpy MidRad pass (other rules, another order)
        mr = run_generic(MidRadContext(), p, bits, readout_only=True)
        ratio = r / mr.T.rad
        print(cfg, "kernel / independent radius", (r / r_ref).min(), "kernel / generic MidRad",
              ratio.min(), np.median(ratio))  # fmt: skip
