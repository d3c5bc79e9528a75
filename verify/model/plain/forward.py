"""The float64 forward pass over a batch of bit strings, with layer-norm diagnostics.

``forward(params, bits, diagnostics)`` returns :class:`ForwardResult`. T(x) = w . y^L_r + omega
(model-spec step 7). Diagnostics (model-spec "Blowup"): for every layer norm k (order: norm1, norm2
of each layer, then final_norm for pre-LN) and position n, the population variance var of its
input d^k_n, z = 1/sqrt(var + eps) (the annotated form's coefficient 1/(std_unbiased + eps),
``verify.model.spec.ln_forms``), tau_k = max_n (1 + z^k_n), beta = prod_k tau_k; and Hahn &
Rofin's logged variant beta_hr = prod_k max_n 1/std_unbiased(d^k_n) (no eps), where for the norms
whose output reaches T only through the readout position (post-LN: both norms of the last layer;
pre-LN: norm2 of the last layer and final_norm) only the readout position is taken, as in their
code ("in the last layer only the last position is kept").

At eps = 0 a layer-norm input with zero variance makes LN 0/0: T is NaN (undefined, never a
number), its z and tau are +inf, and the diagnostics of every later norm (whose input is then
undefined) and beta are NaN. float64 values are not certified here; see
``verify.model.certified.truth_table`` for certified output bits.

``engine="numpy"`` (the default, the reference): batches of more than 1024 strings run in
chunks of 1024 on a thread per core, each with a one-thread BLAS (numpy releases the GIL in its
array operations): 1.7x a single thread with a two-thread BLAS on 2 cores (2^14 strings at
(D, L) = (32, 4), 2026-12-01). ``engine="numba"``: the same pass as one Numba kernel
(``verify.model.plain.diagnostics``, blocks of strings in parallel), agreeing with it to
rounding (tests/test_model_forward_numba.py); the diagnostics above are then computed from its
variances by the same code.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from verify._threads import blas_on_one_thread
from verify.errors import ValidationError
from verify.model.plain.forward_numpy import forward_dense
from verify.model.spec.ln_forms import coefficient
from verify.model.spec.params import Params
from verify.validation import check_choice

_CHUNK = 1024
_DIAGNOSTICS_CHUNK = 1 << 15  # strings per call of blowup_diagnostics on a large batch


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class ForwardResult:
    """Outputs of :func:`forward` for B strings of length N (S = seq_len(N), K = n_norms)."""

    T: np.ndarray  # (B,) float64
    y_readout: np.ndarray  # (B, D) final vector at the readout position
    var: np.ndarray | None = None  # (B, K, S) population variance of each LN input
    z: np.ndarray | None = None  # (B, K, S) 1/sqrt(var + eps)
    tau: np.ndarray | None = None  # (B, K) max_n (1 + z)
    beta: np.ndarray | None = None  # (B,) prod_k tau_k (arXiv 2606.08768)
    beta_hr: np.ndarray | None = None  # (B,) Hahn & Rofin's logged blowup (see module doc)

    @property
    def undefined(self) -> np.ndarray:
        """(B,) bool: T is NaN (float64 met a zero-variance layer-norm input at eps = 0)."""
        return np.isnan(self.T)


def check_bits(bits: object, n_bits: int | None = None) -> np.ndarray:
    """Validate a (B, N) array of 0/1 (a single (N,) string is promoted to (1, N))."""
    try:
        arr = np.asarray(bits)
    except (TypeError, ValueError) as exc:
        raise ValidationError("bits", "a (B, N) array of 0/1", type(bits).__name__) from exc
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValidationError("bits", "a (B, N) array of 0/1", f"shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValidationError("bits", "a (B, N) array of 0/1", f"dtype {arr.dtype}")
    if arr.size and not np.all((arr == 0) | (arr == 1)):
        raise ValidationError("bits", "entries 0 or 1 only", "other values")
    if n_bits is not None and arr.shape[1] != n_bits:
        raise ValidationError("bits", f"{n_bits} columns", arr.shape[1])
    return np.ascontiguousarray(arr, dtype=np.uint8)


def hr_positions_mask(params: Params, seq_len: int) -> np.ndarray:
    """(K, S) bool: positions that enter Hahn & Rofin's blowup for each norm (see module doc)."""
    cfg = params.config
    mask = np.ones((cfg.n_norms, seq_len), dtype=bool)
    last = 2 * (cfg.n_layers - 1)
    # the last layer's norms that see the readout position only, then the final norm
    readout_only = [last + 1] if cfg.norm_first else [last, last + 1]
    if cfg.final_norm:
        readout_only.append(2 * cfg.n_layers)
    for k in readout_only:
        mask[k, :-1] = False
    return mask


def blowup_diagnostics(
    var: np.ndarray, eps: float, d_model: int, hr_mask: np.ndarray, form: str = "torch"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(z, tau, beta, beta_hr) from the LN input variances var (B, K, S); z is the coefficient
    of the layer-norm ``form`` (``verify.model.spec.ln_forms.coefficient``: 1/sqrt(var + eps) for
    torch's, 1/(std_unbiased + eps) for the annotated one)."""
    z = coefficient(var, eps, d_model, form)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (1.0 + z).max(axis=2)
        beta = tau.prod(axis=1)
        if d_model > 1:
            inv_std = 1.0 / np.sqrt(var * (d_model / (d_model - 1.0)))
        else:
            inv_std = np.full_like(var, np.nan)
        beta_hr = np.where(hr_mask[None], inv_std, -np.inf).max(axis=2).prod(axis=1)
    return z, tau, beta, beta_hr


ENGINES = ("numpy", "numba")


def forward(
    params: Params, bits: object, diagnostics: bool = False, engine: str = "numpy"
) -> ForwardResult:
    """Float64 forward pass of model-spec over the strings ``bits`` (B, N), x_1 in column 0;
    ``engine`` "numpy" (the reference) or "numba" (the same pass in one kernel, module doc)."""
    if not isinstance(params, Params):
        raise ValidationError("params", "a verify.model.Params", type(params).__name__)
    check_choice("engine", engine, ENGINES)
    cfg = params.config
    arr = check_bits(bits)
    n = cfg.check_n_bits(arr.shape[1])
    s = cfg.seq_len(n)
    if engine == "numba" and cfg.ln_form == "torch":  # the kernel computes torch's form only
        from verify.model.plain.forward_numba import forward_numba

        t, var, y_r = forward_numba(params, arr)
        return _result(params, t, y_r, var if diagnostics else None)
    b = arr.shape[0]
    arrays = dict(params)
    t = np.empty(b)
    y_r = np.empty((b, cfg.d_model))
    var = np.empty((b, cfg.n_norms, s)) if diagnostics else None
    errstate = np.geterr()  # numpy's error state is per thread: the workers take the caller's

    def run(start: int) -> None:
        stop = min(b, start + _CHUNK)
        with np.errstate(**errstate):
            t[start:stop], v, y_r[start:stop] = forward_dense(cfg, arrays, arr[start:stop])
        if var is not None:
            var[start:stop] = v

    starts = range(0, b, _CHUNK)
    workers = min(len(starts), _cores())
    if workers <= 1:
        for start in starts:
            run(start)
    else:  # chunks on the cores, each with a one-thread BLAS (1.7x a two-thread BLAS on 2 cores)
        with blas_on_one_thread(), ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))
    return _result(params, t, y_r, var)


def _result(
    params: Params, t: np.ndarray, y_r: np.ndarray, var: np.ndarray | None
) -> ForwardResult:
    """The ForwardResult of T, the readout vectors and (with diagnostics) the variances."""
    if var is None:
        return ForwardResult(T=t, y_readout=y_r)
    cfg = params.config
    z, tau, beta, beta_hr = blowup_diagnostics_chunked(
        var, cfg.ln_eps, cfg.d_model, hr_positions_mask(params, var.shape[2]), cfg.ln_form
    )
    return ForwardResult(T=t, y_readout=y_r, var=var, z=z, tau=tau, beta=beta, beta_hr=beta_hr)


def blowup_diagnostics_chunked(
    var: np.ndarray, eps: float, d_model: int, hr_mask: np.ndarray, form: str = "torch"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`blowup_diagnostics` ``_DIAGNOSTICS_CHUNK`` strings at a time, into arrays made
    once: the same numbers (each string's come from its own row), without the whole-batch
    temporaries. At N = 20, (32, 4): 13.0 -> 3.7 s and about 8 GB less (each of its seven
    temporaries is as large as var, 1.4 GB; measured 2026-12-06)."""
    b = var.shape[0]
    if b <= _DIAGNOSTICS_CHUNK:
        return blowup_diagnostics(var, eps, d_model, hr_mask, form)
    z = np.empty_like(var)
    tau = np.empty(var.shape[:2])
    beta = np.empty(b)
    beta_hr = np.empty(b)
    for start in range(0, b, _DIAGNOSTICS_CHUNK):
        rows = slice(start, start + _DIAGNOSTICS_CHUNK)
        z[rows], tau[rows], beta[rows], beta_hr[rows] = blowup_diagnostics(
            var[rows], eps, d_model, hr_mask, form
        )
    return z, tau, beta, beta_hr
