"""verify._threads: BLAS limited to one thread inside the toolkit's calls, restored after."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from verify._threads import blas_on_one_thread, one_blas_thread
from verify.model import ModelConfig, init_params, truth_table


def _blas_threads() -> list[int]:
    return [
        info["num_threads"] for info in ThreadpoolController().info() if info["user_api"] == "blas"
    ]


def test_blas_on_one_thread_limits_and_restores() -> None:
    before = _blas_threads()
    with blas_on_one_thread():
        assert all(n == 1 for n in _blas_threads())
        with blas_on_one_thread():  # nests
            assert all(n == 1 for n in _blas_threads())
        assert all(n == 1 for n in _blas_threads())
    assert _blas_threads() == before


def test_decorated_entry_points_run_blas_on_one_thread() -> None:
    seen: list[list[int]] = []

    @one_blas_thread
    def probe(x: np.ndarray) -> np.ndarray:
        seen.append(_blas_threads())
        return x @ x

    before = _blas_threads()
    assert np.allclose(probe(np.eye(3)), np.eye(3))
    assert seen and all(n == 1 for n in seen[0])
    assert _blas_threads() == before
    # the public entry point keeps its name and doc, and restores the limits too
    assert truth_table.__name__ == "truth_table" and "Certified labels" in (
        truth_table.__doc__ or ""
    )
    params = init_params(ModelConfig(d_model=8, n_layers=1, n_heads=2), "xavier_uniform", 0)
    truth_table(params, 3)
    assert _blas_threads() == before


@pytest.mark.parametrize("entry", ["truth_table", "exhaustive_T", "fast_T", "dd_T"])
def test_entry_points_prepare_with_blas_on_one_thread(entry: str, monkeypatch) -> None:
    """Each public entry point builds its tables (the BLAS work) with BLAS on one thread, even
    when the caller runs BLAS on two."""
    import verify.model.double_double.dd_pass as dd
    import verify.model.exhaustive.exhaustive_pass as ex
    import verify.model.per_string.per_string_pass as fa
    from verify.boolean.function import all_bit_strings

    seen: list[list[int]] = []

    def spy(module: object, name: str) -> None:
        original = getattr(module, name)

        def recorded(*args: object, **kwargs: object) -> object:
            seen.append(_blas_threads())
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, recorded)

    spy(ex, "prepare_exhaustive")
    spy(fa, "prepare")
    spy(dd, "prepare_dd")
    params = init_params(ModelConfig(d_model=8, n_layers=2, n_heads=2), "xavier_uniform", 0)
    bits = all_bit_strings(6)
    calls = {
        "truth_table": lambda: truth_table(params, 6),
        "exhaustive_T": lambda: ex.exhaustive_T(params, 6),
        "fast_T": lambda: fa.fast_T(params, bits),
        "dd_T": lambda: dd.dd_T(params, bits),
    }
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        assert all(n == 2 for n in _blas_threads())  # the caller's setting, so the check can fail
        calls[entry]()
    assert seen and all(n == 1 for threads in seen for n in threads), seen


def test_numba_threads_for_uses_one_thread_below_the_minimum_and_restores() -> None:
    import numba

    from verify._threads import numba_threads_for

    before = numba.get_num_threads()
    with numba_threads_for(10, 256):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with numba_threads_for(256, 256):  # at the minimum: as it was
        assert numba.get_num_threads() == before
    with pytest.raises(RuntimeError), numba_threads_for(0, 1):
        raise RuntimeError("restored all the same")
    assert numba.get_num_threads() == before


def test_fast_T_is_the_same_on_one_thread_and_on_all() -> None:
    """A small batch now runs on one thread (MIN_PARALLEL_STRINGS): the numbers of the
    parallel run, string by string."""
    import numba
    import numpy as np

    from verify.model import ModelConfig, init_params
    from verify.model.per_string.per_string_pass import MIN_PARALLEL_STRINGS, fast_T

    cfg = ModelConfig(d_model=8, n_layers=2, n_heads=2, ln_eps=0.0)
    p = init_params(cfg, "uniform", 4, 1.0)
    bits = np.random.default_rng(0).integers(0, 2, (MIN_PARALLEL_STRINGS, 9)).astype(np.uint8)
    t_all, r_all = fast_T(p, bits)  # at the minimum: every thread
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        t_one, r_one = fast_T(p, bits)
    finally:
        numba.set_num_threads(before)
    small_t, small_r = fast_T(p, bits[:5])  # below it: one thread
    assert np.array_equal(t_all, t_one, equal_nan=True)
    assert np.array_equal(r_all, r_one, equal_nan=True)
    assert np.array_equal(small_t, t_all[:5], equal_nan=True)
    assert np.array_equal(small_r, r_all[:5], equal_nan=True)
