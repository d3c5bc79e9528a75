"""verify.experiments.train_cache: trained parameters kept on disk between runs, keyed by every
input (a changed input misses), the numbers of a hit those of a miss (bit-identical)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from verify.experiments import train, train_cache
from verify.experiments.train import TrainSettings, evaluate
from verify.model import init_params


def cached_train(function: str, n: int, settings: TrainSettings, seed: int):  # type: ignore[no-untyped-def]
    """What check_models does for one model."""
    key = train_cache.model_key(function, n, settings, seed)
    return train_cache.cached(key, lambda: train.train_model(function, n, settings, seed))


TINY = TrainSettings(d_model=4, n_layers=1, d_ff=8, steps=3, batch=8, max_len=6,
                     sharpness_repeats=2, sharpness_strings=8)  # fmt: skip


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(train_cache.CACHE_VARIABLE, str(tmp_path))
    return tmp_path / "trained"


def test_key_covers_every_input(monkeypatch: pytest.MonkeyPatch) -> None:
    key = train_cache.model_key("parity", 4, TINY, 0)
    assert key == train_cache.model_key("parity", 4, replace(TINY), 0)
    others = [
        train_cache.model_key("majority", 4, TINY, 0),
        train_cache.model_key("parity", 5, TINY, 0),
        train_cache.model_key("parity", 4, TINY, 1),
        train_cache.model_key("parity", 4, replace(TINY, steps=4), 0),
        train_cache.model_key("parity", 4, replace(TINY, lr=TINY.lr * (1 + 1e-12)), 0),
    ]
    monkeypatch.setattr(train_cache, "code_digest", lambda: "another version of the code")
    others.append(train_cache.model_key("parity", 4, TINY, 0))
    monkeypatch.setattr(train_cache, "_version", lambda package: "another " + package)
    others.append(train_cache.model_key("parity", 4, TINY, 0))
    assert len({key, *others}) == len(others) + 1


def test_code_digest_follows_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(train_cache, "PACKAGE_ROOT", tmp_path)
    train_cache.code_digest.cache_clear()
    try:
        before = train_cache.code_digest()
        (tmp_path / "a.py").write_text("x = 2\n")
        train_cache.code_digest.cache_clear()
        assert train_cache.code_digest() != before
    finally:
        train_cache.code_digest.cache_clear()


def test_hit_gives_the_trained_numbers(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    calls: list[str] = []
    real = train.train_model

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(train, "train_model", counting)
    fresh = cached_train("parity", 4, TINY, 2)
    assert calls == ["parity"] and len(list(cache.glob("*.npz"))) == 1
    hit = cached_train("parity", 4, TINY, 2)
    assert calls == ["parity"]  # read from disk, not trained again
    assert hit.config == fresh.config
    for name in fresh:
        np.testing.assert_array_equal(hit[name], fresh[name])
        assert hit[name].dtype == fresh[name].dtype
    a = json.dumps(evaluate(fresh, "parity", 4, TINY, 2), sort_keys=True)
    assert json.dumps(evaluate(hit, "parity", 4, TINY, 2), sort_keys=True) == a
    cached_train("parity", 4, TINY, 3)  # another seed: a miss, trained
    assert calls == ["parity", "parity"]
    # a damaged file is trained again and rewritten
    for f in cache.glob("*.npz"):
        f.write_bytes(b"not a zip")
    again = cached_train("parity", 4, TINY, 2)
    assert calls == ["parity"] * 3
    for name in fresh:
        np.testing.assert_array_equal(again[name], fresh[name])


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(train_cache.CACHE_VARIABLE, "off")
    assert train_cache.cache_dir() is None
    monkeypatch.setattr(train, "train_model", lambda *a, **k: pytest.fail("not trained here"))
    assert train_cache.load_params("0" * 64) is None
    monkeypatch.delenv(train_cache.CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert train_cache.cache_dir() == tmp_path / "verify" / "trained"


def test_cached_models_need_no_torch(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check_models_available: True without torch when every model of the grid is on disk."""
    grid = (("parity",), (4,), TINY)
    monkeypatch.setitem(train.CHECK_GRIDS, "quick", grid)
    monkeypatch.setattr(train, "_PARAMS", {})
    import verify.torch

    monkeypatch.setattr(verify.torch, "torch_available", lambda: False)
    assert not train.check_models_available("quick", 7)
    params = init_params(TINY.model_config(), "uniform", 0, 1.0)
    train_cache.save_params(train_cache.model_key("parity", 4, TINY, 7), params)
    assert train.check_models_available("quick", 7)
    ((_, loaded),) = train.check_models("quick", 7)
    for name in params:
        np.testing.assert_array_equal(loaded[name], params[name])
