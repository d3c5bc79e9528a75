"""verify._threads: BLAS limited to one thread inside the toolkit's calls, restored after."""

from __future__ import annotations

import numpy as np
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
