"""verify.torch against torch itself: outputs, fast and slow paths, round trips, files, errors.

Every comparison is |T_torch - T_verify| <= 1e-12 * (sum_i |w_i y_i| + |omega|), the size of the
terms summed into T (a relative error that does not blow up when T happens to be near 0).
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.boolean.function import all_bit_strings
from verify.errors import ValidationError
from verify.model import ModelConfig, Params, forward, init_params, truth_table

torch = pytest.importorskip("torch")

from verify.strategies import SPEC_OPTION_GRID  # noqa: E402
from verify.strategies import params as params_strategy  # noqa: E402
from verify.torch import SpecTransformer, from_torch, spec_state_dict, to_torch  # noqa: E402

pytestmark = pytest.mark.torch

RTOL = 1e-12

OPTIONS = list(SPEC_OPTION_GRID)
IDS = [
    f"{'pre' if nf else 'post'}-eps{e:g}-{'eos' if eo else 'last'}-{em}-{p}-"
    f"{'affine' if a else 'plain'}"
    for nf, e, eo, em, p, a in OPTIONS
]


def _config(index: int, **overrides: object) -> ModelConfig:
    norm_first, eps, eos, embedding, pos, affine = OPTIONS[index]
    fields = dict(
        d_model=8,
        n_layers=2,
        n_heads=2 if index % 3 else 1,  # even H takes torch's fused fast path under no_grad
        d_ff=12,
        ln_eps=eps,
        norm_first=norm_first,
        ln_affine=affine,
        eos=eos,
        pos_encoding=pos,
        embedding=embedding,
        max_len=9,
    )
    fields.update(overrides)
    return ModelConfig(**fields)


def _params(cfg: ModelConfig, seed: int) -> Params:
    """Gaussian parameters; norm gains moved to 1 + N(0, 0.25) so affine LN is not trivial."""
    p = init_params(cfg, "gaussian", seed=seed, scale=0.6)
    gains = {name: 1.0 + 0.5 * p[name] for name in p if "norm" in name and name.endswith("weight")}
    return p.with_arrays(gains)


def _assert_close(t_torch: np.ndarray, params: Params, bits: np.ndarray) -> float:
    """Compare with verify.model.plain.forward; return the worst error in units of the T scale."""
    ref = forward(params, bits)
    scale = np.abs(ref.y_readout * params["readout.weight"]).sum(axis=1) + abs(
        float(params["readout.bias"])
    )
    return _worst_ratio(np.asarray(t_torch), ref.T, scale)


def _worst_ratio(t: np.ndarray, ref: np.ndarray, scale: np.ndarray) -> float:
    """max |t - ref| / scale (0/0 counts 0, x/0 inf), asserted <= RTOL. NaN (an undefined
    eps = 0 layer norm) must occur on both sides or on neither."""
    undefined = np.isnan(ref)
    assert np.array_equal(np.isnan(t), undefined), "NaN (undefined T) on one side only"
    t, ref, scale = t[~undefined], ref[~undefined], scale[~undefined]
    err = np.abs(t - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(err == 0, 0.0, err / scale)
    worst = float(ratio.max()) if ratio.size else 0.0
    assert worst <= RTOL, f"torch vs verify: worst error {worst:.2e} of the T scale > {RTOL}"
    return worst


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """Tiny problems: one intra-op thread (2 cores shared by the whole test run)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def bits() -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.integers(0, 2, size=(16, 6)).astype(np.uint8)


@pytest.mark.parametrize("index", range(len(OPTIONS)), ids=IDS)
def test_torch_matches_forward(index: int, bits: np.ndarray) -> None:
    cfg = _config(index)
    params = _params(cfg, seed=index)
    module = to_torch(params)
    t_slow = module(bits).detach().numpy()  # grad enabled: the Python path of the layers
    with torch.no_grad():
        t_fast = module(bits).numpy()  # fused fast path when H is even
        t_readout = module(bits, readout_only=True).numpy()
    worst = max(_assert_close(t, params, bits) for t in (t_slow, t_fast, t_readout))
    print(f"{IDS[index]} H={cfg.n_heads}: worst |T_torch - T| / scale = {worst:.2e}")


@settings(max_examples=40, deadline=None)
@given(params_strategy(), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_torch_matches_forward_on_strategy_params(params: Params, n_bits: int, seed: int) -> None:
    """Random configs and parameters of verify.strategies.params (every option, odd widths,
    the four init schemes): torch, fast path and readout-only, against forward."""
    n_bits = min(n_bits, params.config.max_len)
    bits = np.random.default_rng(seed).integers(0, 2, size=(4, n_bits)).astype(np.uint8)
    module = to_torch(params)
    with torch.no_grad():
        _assert_close(module(bits).numpy(), params, bits)
        _assert_close(module(bits, readout_only=True).numpy(), params, bits)


def test_fast_path_is_exercised(monkeypatch: pytest.MonkeyPatch, bits: np.ndarray) -> None:
    """The fused kernel (torch._transformer_encoder_layer_fwd) runs under no_grad for even H,
    also with plain LN (the reason plain norms keep weight tensors), and not with grad on."""
    calls = []
    original = torch._transformer_encoder_layer_fwd

    def counting(*args: object) -> object:
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(torch, "_transformer_encoder_layer_fwd", counting)
    for affine, norm_first in itertools.product([True, False], [False, True]):
        cfg = ModelConfig(d_model=8, n_heads=2, ln_eps=0.0, ln_affine=affine, norm_first=norm_first)
        params = _params(cfg, seed=3)
        module = to_torch(params)
        calls.clear()
        with torch.no_grad():
            t = module(bits).numpy()
        assert len(calls) == cfg.n_layers
        _assert_close(t, params, bits)
        calls.clear()
        module(bits)
        assert not calls


def test_state_dict_names_and_round_trip() -> None:
    for index in (0, 13, 47, 95):
        params = _params(_config(index), seed=index)
        module = to_torch(params)
        state = module.state_dict()
        assert list(state) == list(params), "state_dict names/order differ from model-spec"
        for name, array in params.items():
            assert tuple(state[name].shape) == array.shape
            assert state[name].dtype == torch.float64
        back = from_torch(module)
        assert back.config == params.config
        for name in params:
            assert np.array_equal(back[name], params[name]), name
        # weights move without renaming, both ways
        fresh = SpecTransformer(params.config)
        fresh.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in params.items()})
        assert np.array_equal(
            from_torch(fresh.state_dict(), params.config).flatten(), params.flatten()
        )


def test_float32_state_dict_and_empty_string() -> None:
    """float32 weights widen exactly to float64; with eos, N = 0 reads out at the eos token."""
    cfg = ModelConfig(d_model=8, n_heads=2, eos=True)
    params = _params(cfg, seed=5)
    state32 = {k: v.float() for k, v in to_torch(params).state_dict().items()}
    widened = from_torch(state32, cfg)
    for name in params:
        assert np.array_equal(widened[name], params[name].astype(np.float32).astype(np.float64))
    empty = np.zeros((2, 0), dtype=np.uint8)
    _assert_close(to_torch(params)(empty).detach().numpy(), params, empty)


def test_torch_initialised_model_to_params(bits: np.ndarray) -> None:
    """A model whose weights come from torch's own initialisation (and a training-like
    update), read into verify, computes the same T."""
    cfg = ModelConfig(
        d_model=8,
        n_layers=2,
        n_heads=2,
        ln_eps=1e-5,
        eos=False,
        embedding="concat",
        pos_encoding="learned",
        max_len=8,
    )
    torch.manual_seed(0)
    module = SpecTransformer(cfg)  # torch init for the layers, zeros for the spec's tables
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.3 * torch.randn_like(p))
    params = from_torch(module)
    with torch.no_grad():
        _assert_close(module(bits).numpy(), params, bits)


def test_npz_file_to_torch(tmp_path, bits: np.ndarray) -> None:
    params = _params(_config(30), seed=30)
    path = tmp_path / "model.npz"
    params.save(path)
    module = to_torch(Params.load(path))
    with torch.no_grad():
        _assert_close(module(bits).numpy(), params, bits)
    from_torch(module).save(tmp_path / "back.npz")
    again = Params.load(tmp_path / "back.npz")
    assert again.config == params.config
    assert np.array_equal(again.flatten(), params.flatten())


def test_undefined_layer_norm_is_nan_in_both() -> None:
    """eps = 0 and a constant layer-norm input: 0/0, undefined; neither side makes a number."""
    cfg = ModelConfig(d_model=4, n_layers=1, n_heads=2, ln_eps=0.0, pos_encoding="none", eos=False)
    params = init_params(cfg, "xavier_uniform", seed=0)
    params = params.with_arrays({"token_embedding": np.ones((3, 4))})  # constant rows
    params = params.with_arrays(
        {k: np.zeros_like(v) for k, v in params.items() if k.startswith("layers.0.self_attn")}
    )
    x = np.array([[0, 1, 1]], dtype=np.uint8)
    module = to_torch(params)
    assert np.isnan(forward(params, x).T).all()
    assert np.isnan(module(x).detach().numpy()).all()


def test_plain_ln_from_affine_torch_norms() -> None:
    """A torch model with affine norms at gain 1, bias 0 reads into an ln_affine=False config;
    any other gain is refused, naming the array."""
    cfg_affine = ModelConfig(d_model=8, n_heads=2, ln_affine=True)
    cfg_plain = ModelConfig(d_model=8, n_heads=2, ln_affine=False)
    params = init_params(cfg_affine, "xavier_normal", seed=1)  # gains 1, biases 0
    state = to_torch(params).state_dict()
    plain = from_torch(state, cfg_plain)
    assert "layers.0.norm1.weight" not in plain
    assert np.array_equal(plain["layers.1.linear2.weight"], params["layers.1.linear2.weight"])
    state["layers.1.norm2.weight"][3] = 1.5
    with pytest.raises(ValidationError, match="layers.1.norm2.weight"):
        from_torch(state, cfg_plain)


def test_bad_input_names_the_argument() -> None:
    cfg = ModelConfig(d_model=8, n_heads=2)
    state = to_torch(init_params(cfg, "gaussian", seed=2)).state_dict()
    missing = {k: v for k, v in state.items() if k != "layers.1.linear1.bias"}
    with pytest.raises(ValidationError, match="layers.1.linear1.bias"):
        from_torch(missing, cfg)
    wrong = dict(state, **{"readout.weight": torch.zeros(2, 8, dtype=torch.float64)})
    with pytest.raises(ValidationError, match=r"readout.weight.*\(8,\)"):
        from_torch(wrong, cfg)
    ints = dict(state, **{"readout.bias": torch.tensor(1)})
    with pytest.raises(ValidationError, match="readout.bias"):
        from_torch(ints, cfg)
    nan = dict(state, **{"token_embedding": torch.full((3, 8), float("nan"), dtype=torch.float64)})
    with pytest.raises(ValidationError, match="token_embedding"):
        from_torch(nan, cfg)
    # a bare state_dict: what its shapes do not tell is required, never defaulted
    with pytest.raises(ValidationError, match="n_heads"):
        from_torch(state)
    with pytest.raises(ValidationError, match=r"ln_eps.*1e-5.*keys found: token_embedding"):
        from_torch(state, n_heads=2)
    with pytest.raises(ValidationError, match="pos_encoding"):
        from_torch(state, n_heads=2, ln_eps=0.0)
    inferred = from_torch(state, n_heads=2, ln_eps=0.0, pos_encoding="sinusoidal")
    assert inferred.config == ModelConfig(d_model=8, n_heads=2, ln_eps=0.0)
    other = SpecTransformer(ModelConfig(d_model=8, n_heads=2, ln_eps=1e-5))
    with pytest.raises(ValidationError, match="config"):
        from_torch(other, cfg)
    # a module whose layers compute something else than the config says
    holder = torch.nn.Module()
    holder.layers = torch.nn.ModuleList(
        [torch.nn.TransformerEncoderLayer(8, 2, 32, 0.0, batch_first=True, dtype=torch.float64)]
    )
    with pytest.raises(ValidationError, match=r"layers.0.norm1.eps"):
        from_torch(holder, ModelConfig(d_model=8, n_heads=2, n_layers=1, ln_eps=0.0))
    with pytest.raises(ValidationError, match="params"):
        to_torch(dict(init_params(cfg, "gaussian", seed=2)))
    module = to_torch(init_params(cfg, "gaussian", seed=2))
    with pytest.raises(ValidationError, match="bits"):
        module(np.array([[0, 2, 1]]))
    learned = to_torch(init_params(ModelConfig(pos_encoding="learned", max_len=4), "gaussian", 0))
    with pytest.raises(ValidationError, match="N"):
        learned(np.zeros((1, 5), dtype=np.uint8))


@pytest.mark.parametrize("index", [3, 40, 57, 94], ids=[IDS[i] for i in (3, 40, 57, 94)])
def test_certified_truth_table_agrees_with_torch(index: int) -> None:
    """The certified truth table (fast kernels + enclosures) against torch on all 2^8 strings:
    T within 1e-12 of the T scale, and every certified label equal to torch's sign wherever
    torch's T is farther from 0 than 1e-9 of the scale (closer, torch cannot tell)."""
    n_bits = 8
    cfg = _config(index, max_len=n_bits)
    params = _params(cfg, seed=100 + index)
    table = truth_table(params, n_bits)
    bits = all_bit_strings(n_bits)
    with torch.no_grad():
        t_torch = to_torch(params)(bits, readout_only=True).numpy()
    ref = forward(params, bits)
    scale = np.abs(ref.y_readout * params["readout.weight"]).sum(axis=1)
    scale += abs(float(params["readout.bias"]))
    worst = _worst_ratio(table.T, t_torch, scale)
    clear = np.abs(t_torch) > 1e-9 * scale
    checked = table.certified & clear
    disagree = int(np.count_nonzero(table.label[checked] != (t_torch[checked] > 0)))
    print(
        f"{IDS[index]}: worst |T_table - T_torch| / scale = {worst:.2e}; "
        f"{int(checked.sum())} certified labels compared, {disagree} disagree; "
        f"float64 {table.n_float64}, high precision {table.n_high_precision}, "
        f"uncertain {table.n_uncertain}"
    )
    assert checked.sum() >= 0.9 * bits.shape[0]
    assert disagree == 0


def test_importable_without_torch() -> None:
    """With torch unimportable, verify.torch imports and fails on use with the install hint."""
    code = (
        "import sys\n"
        "class Block:\n"  # a finder that makes torch unimportable, as if not installed
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import verify.torch as vt\n"
        "assert not vt.torch_available()\n"
        "from verify.model import ModelConfig, init_params\n"
        "p = init_params(ModelConfig(), 'gaussian', 0)\n"
        "for call in (lambda: vt.to_torch(p), lambda: vt.SpecTransformer(p.config)):\n"
        "    try:\n"
        "        call()\n"
        "    except vt.TorchUnavailableError as exc:\n"
        "        assert 'torch==2.13.0' in str(exc), exc\n"
        "    else:\n"
        "        raise AssertionError('no error without torch')\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ------------------------------------------------------------ models trained the usual way
class _UsualModel(torch.nn.Module):
    """nn.Embedding tokens (0, 1, eos) and learned positions, nn.TransformerEncoder, nn.Linear
    head at the last (eos) position: how such a model is usually written."""

    def __init__(self, d=8, heads=2, layers=2, max_len=7, norm_first=False, eos=True, eps=1e-5):
        super().__init__()
        self.eos = eos
        self.tok = torch.nn.Embedding(3 if eos else 2, d)
        self.pos = torch.nn.Embedding(max_len + 1, d)
        layer = torch.nn.TransformerEncoderLayer(
            d, heads, 16, dropout=0.0, batch_first=True, norm_first=norm_first, layer_norm_eps=eps
        )
        final = torch.nn.LayerNorm(d, eps=eps) if norm_first else None
        self.encoder = torch.nn.TransformerEncoder(
            layer, layers, norm=final, enable_nested_tensor=False
        )
        self.head = torch.nn.Linear(d, 1)

    def forward(self, bits):
        t = torch.as_tensor(bits, dtype=torch.int64)
        if self.eos:
            t = torch.cat([t, torch.full((t.shape[0], 1), 2)], dim=1)
        y = self.tok(t) + self.pos(torch.arange(t.shape[1]))
        return self.head(self.encoder(y)[:, -1]).squeeze(-1)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post", "pre"])
@pytest.mark.parametrize("eos", [True, False], ids=["eos", "last"])
def test_usual_model_reads_without_renaming(norm_first: bool, eos: bool, bits) -> None:
    """The module itself (config inferred from its layers) and its bare state_dict (n_heads and
    ln_eps given) both give the spec model that computes the module's T."""
    torch.manual_seed(1)
    module = _UsualModel(norm_first=norm_first, eos=eos).double().eval()
    params = from_torch(module)
    cfg = params.config
    assert (cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.d_ff) == (8, 2, 2, 16)
    # 8 position rows: with eos they serve N + 1 <= 8 positions (max_len 7); without eos N <= 8
    # bits (max_len 8; the file's ninth row is a zero pad, never read)
    assert (cfg.ln_eps, cfg.norm_first, cfg.eos, cfg.max_len) == (
        1e-5,
        norm_first,
        eos,
        7 + 1 - eos,
    )
    assert cfg.pos_encoding == "learned"
    with torch.no_grad():
        t_module = module(bits).numpy()
    _assert_close(t_module, params, bits)
    bare = from_torch(module.state_dict(), n_heads=2, ln_eps=1e-5, norm_first=norm_first, eos=eos)
    assert np.array_equal(bare.flatten(), params.flatten())
    _, mapping = spec_state_dict(module.state_dict())
    renamed = {old: new for old, new, _ in mapping.renames}
    assert renamed["tok.weight"] == "token_embedding"
    assert renamed["head.weight"] == "readout.weight"
    assert renamed["encoder.layers.1.linear2.bias"] == "layers.1.linear2.bias"


def test_prefix_and_key_map(bits) -> None:
    """A checkpoint nesting the model under a prefix, and odd names mapped by key_map."""
    torch.manual_seed(2)
    module = _UsualModel().double().eval()
    wrapped = {f"model.{k}": v for k, v in module.state_dict().items()}
    wrapped["optimizer_step"] = torch.tensor(3.0)
    params = from_torch(wrapped, prefix="model.", n_heads=2, ln_eps=1e-5)
    odd = {k.replace("head", "classifier_out"): v for k, v in module.state_dict().items()}
    assert np.array_equal(from_torch(odd, n_heads=2, ln_eps=1e-5).flatten(), params.flatten())
    odd["aux_out.weight"] = torch.zeros(1, 8, dtype=torch.float64)  # a second Linear(D, 1)
    odd["aux_out.bias"] = torch.zeros(1, dtype=torch.float64)
    with pytest.raises(ValidationError, match="keys found: tok.weight, pos.weight"):
        from_torch(odd, n_heads=2, ln_eps=1e-5)
    with pytest.raises(ValidationError, match="aux_out.weight"):  # named, so no longer a guess
        from_torch(odd, n_heads=2, ln_eps=1e-5, key_map={"classifier_out.": "readout."})
    kept = {k: v for k, v in odd.items() if not k.startswith("aux_out.")}
    again = from_torch(kept, n_heads=2, ln_eps=1e-5, key_map={"classifier_out.": "readout."})
    assert np.array_equal(again.flatten(), params.flatten())
    with torch.no_grad():
        _assert_close(module(bits).numpy(), params, bits)


def test_consistency_check_reaches_transformer_encoder() -> None:
    """A config that contradicts the module's nn.TransformerEncoder layers is refused, naming
    the layer by its path (encoder.layers.<l>...)."""
    module = _UsualModel().double().eval()
    cfg = from_torch(module).config
    wrong_eps = ModelConfig(**{**cfg.to_dict(), "ln_eps": 0.0})
    with pytest.raises(ValidationError, match=r"encoder.layers.0.norm1.eps"):
        from_torch(module, wrong_eps)
    wrong_heads = ModelConfig(**{**cfg.to_dict(), "n_heads": 4})
    with pytest.raises(ValidationError, match=r"encoder.layers.0.self_attn.num_heads"):
        from_torch(module, wrong_heads)
    with pytest.raises(ValidationError, match=r"encoder.layers.0.norm1.eps.*1e-05"):
        from_torch(module, ln_eps=0.0)  # contradicts the module's own layers
