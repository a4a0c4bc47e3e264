"""`compat.resolve`, `compat.trl` and `compat.losses`: lazy, cached, one notice per name, and the right object on
each TRL line (the `trl`-marked tests run in the tox envs of TRL 1.13, 1.14, 1.15 and 1.16 with the real wheels)."""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys
import textwrap
import warnings
from importlib.metadata import PackageNotFoundError, version

import pytest
from packaging.version import Version

from compat.resolve import CompatFallbackWarning, NameTable, UnresolvableNameError

# -- the resolver on throw-away packages (no TRL needed) ----------------------------------------------------------


@pytest.fixture
def fake_packages(tmp_path, monkeypatch):
    """`upstream_x` (has `Thing` only), `fallback_x` (has `Thing` and `Other`), `broken_x` (imports a missing dep)."""
    (tmp_path / "upstream_x").mkdir()
    (tmp_path / "upstream_x" / "__init__.py").write_text("class Thing: pass\n")
    (tmp_path / "fallback_x").mkdir()
    (tmp_path / "fallback_x" / "__init__.py").write_text("class Thing: pass\nclass Other: pass\n")
    (tmp_path / "broken_x").mkdir()
    (tmp_path / "broken_x" / "__init__.py").write_text("import not_installed_dependency_xyz\nclass Thing: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in ("upstream_x", "fallback_x", "broken_x"):
        sys.modules.pop(name, None)


def _table() -> NameTable:
    return NameTable("fake.names", {
        "Thing": (("upstream_x", "Thing"), ("fallback_x", "Thing")),
        "Other": (("upstream_x.gone", "Other"), ("upstream_x", "Other"), ("fallback_x", "Other")),
        "Missing": (("nowhere_abc", "Missing"),),
        "OwnCopy": (("fallback_x", "Other"),),
        "Broken": (("broken_x", "Thing"), ("fallback_x", "Thing")),
    }, reference_modules=("fallback_x",))


def test_first_existing_candidate_wins_and_notice_is_once(fake_packages, caplog):
    table = _table()
    caplog.set_level(logging.INFO, logger="compat.resolve")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = table.lookup("Thing")
        again = table.lookup("Thing")
        other = table.lookup("Other")
        table.lookup("Other")
    assert first is again is importlib.import_module("upstream_x").Thing
    assert other is importlib.import_module("fallback_x").Other
    assert table.resolution("Thing").origin == "upstream_x.Thing" and not table.resolution("Thing").is_reference
    assert table.resolution("Other").is_reference
    notices = [r.getMessage() for r in caplog.records]
    assert len(notices) == 2 and "using upstream_x.Thing" in notices[0] and "fallback_x.Other" in notices[1]
    fallbacks = [w for w in caught if issubclass(w.category, CompatFallbackWarning)]
    assert len(fallbacks) == 1 and "fake.names.Other" in str(fallbacks[0].message)


def test_a_name_only_trl_compat_provides_is_logged_not_warned(fake_packages, caplog):
    """`compat.trl.warmup`, `setup_chat_format`: the copy is the only candidate, nothing stands in for TRL."""
    table = _table()
    caplog.set_level(logging.INFO, logger="compat.resolve")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        obj = table.lookup("OwnCopy")
    assert obj is importlib.import_module("fallback_x").Other and table.resolution("OwnCopy").is_reference
    assert not [w for w in caught if issubclass(w.category, CompatFallbackWarning)]
    assert any("trl-compat's copy fallback_x.Other" in r.getMessage() for r in caplog.records)


def test_unknown_missing_and_broken(fake_packages):
    table = _table()
    with pytest.raises(AttributeError):
        table.lookup("Nope")
    with pytest.raises(UnresolvableNameError, match="nowhere_abc"):
        table.lookup("Missing")
    # a candidate whose module exists but fails on a dependency is a broken environment: no silent fallback
    with pytest.raises(ModuleNotFoundError, match="not_installed_dependency_xyz"):
        table.lookup("Broken")


def test_install_makes_a_lazy_module(fake_packages):
    namespace: dict = {"__name__": "fake.names"}
    _table().install(namespace)
    assert "Thing" not in namespace and "Thing" in namespace["__all__"]
    thing = namespace["__getattr__"]("Thing")
    assert namespace["Thing"] is thing  # cached in the module: the next lookup never reaches __getattr__
    assert "Other" in namespace["__dir__"]()
    with pytest.raises(AttributeError):
        namespace["__getattr__"]("__path__")


def test_importing_compat_trl_is_cheap():
    code = textwrap.dedent("""\
        import sys, compat.trl, compat.losses
        heavy = [m for m in ("torch", "trl", "transformers", "reference_impl") if m in sys.modules]
        assert not heavy, heavy
        assert "GRPOTrainer" in dir(compat.trl) and "FusedLinearDPOLoss" in compat.losses.__all__
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fallback_prepare_multimodal_messages_vllm():
    from compat.trl import _prepare_multimodal_messages_vllm as prep

    image = object()
    messages = [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": "plain"}]
    out = prep(messages)
    assert out[0]["content"][0] == {"type": "image_pil", "image_pil": out[0]["content"][0]["image_pil"]}
    assert messages[0]["content"][0]["type"] == "image"  # the input is not modified
    assert out[1] == messages[1]


@pytest.mark.slow  # imports torch
def test_fallback_dft_loss_matches_its_definition():
    torch = pytest.importorskip("torch")
    from types import SimpleNamespace

    from compat.trl import _dft_loss

    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 7, generator=gen)
    labels = torch.randint(0, 7, (2, 5), generator=gen)
    labels[0, :2] = -100
    loss = _dft_loss(SimpleNamespace(logits=logits), labels.clone())
    # DFT (arXiv 2508.05629): -sum_t sg(p_t) * log p_t over the next-token targets, averaged over the valid tokens
    logp = logits.log_softmax(-1)
    total, count = 0.0, 0
    for b in range(2):
        for t in range(5):
            target = labels[b, t + 1].item() if t + 1 < 5 else -100
            if target != -100:
                lp = logp[b, t, target]
                total += -(lp.exp() * lp).item()
                count += 1
    assert loss.item() == pytest.approx(total / count, rel=1e-5)


# -- the real TRL lines -------------------------------------------------------------------------------------------


def _trl_version() -> Version:
    try:
        v = Version(version("trl"))
    except PackageNotFoundError:
        pytest.skip("trl is not installed")
    if not Version("1.13") <= Version(v.base_version) < Version("1.17"):
        pytest.skip(f"trl {v} is outside the supported lines 1.13-1.16")
    pytest.importorskip("torch")
    return Version(v.base_version)


def _expected(v: Version) -> dict[str, str]:
    """Where each stable name must come from on TRL line `v` (read from the 1.13-1.16 wheels)."""
    on_113 = v < Version("1.14")
    before_115 = v < Version("1.15")
    expected = {
        "GRPOTrainer": "trl.GRPOTrainer", "GRPOConfig": "trl.GRPOConfig", "RLOOTrainer": "trl.RLOOTrainer",
        "KTOTrainer": "trl.KTOTrainer", "DistillationTrainer": "trl.DistillationTrainer",
        "OnlineDPOTrainer": "trl.experimental.online_dpo.OnlineDPOTrainer",
        "OnlineDPOConfig": "trl.experimental.online_dpo.OnlineDPOConfig",
        "create_reference_model": "trl.experimental.utils.create_reference_model",
        "PRMTrainer": "trl.experimental.prm.PRMTrainer" if on_113 else "reference_impl.PRMTrainer",
        "PRMConfig": "trl.experimental.prm.PRMConfig" if on_113 else "reference_impl.PRMConfig",
        "BCOTrainer": "trl.experimental.bco.BCOTrainer" if on_113 else "reference_impl.BCOTrainer",
        "BCOConfig": "trl.experimental.bco.BCOConfig" if on_113 else "reference_impl.BCOConfig",
        **{n: f"trl.experimental.{pkg}.{n}" if on_113 else f"reference_impl.{n}" for pkg, n in (
            ("xpo", "XPOTrainer"), ("xpo", "XPOConfig"), ("nash_md", "NashMDTrainer"), ("nash_md", "NashMDConfig"))},
        "prepare_multimodal_messages_vllm": "trl.data_utils.prepare_multimodal_messages_vllm" if before_115
        else "compat.trl._prepare_multimodal_messages_vllm",
        "dft_loss": "trl.trainer.sft_trainer.dft_loss" if before_115 else "compat.trl._dft_loss",
    }
    for name in ("FusedLinearDPOLoss", "FusedLinearKTOLoss", "FusedLinearGRPOLoss", "FusedLinearJSDLoss"):
        expected[name] = f"trl.losses.{name}" if on_113 else f"reference_impl.losses.{name}"
    return expected


def _object_at(path: str):
    module, _, attribute = path.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


@pytest.mark.trl
@pytest.mark.slow
def test_compat_trl_resolves_to_the_expected_object():
    v = _trl_version()
    import compat.trl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, where in _expected(v).items():
            obj = getattr(compat.trl, name)
            assert obj is _object_at(where), (name, where)
            assert compat.trl.TABLE.resolution(name).origin == where
            assert compat.trl.TABLE.resolution(name).is_reference == (not where.startswith("trl."))


@pytest.mark.trl
@pytest.mark.slow
def test_compat_losses_resolves_to_the_expected_object():
    v = _trl_version()
    import compat.losses

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in compat.losses.NAMES:
            where = _expected(v)[name]
            assert getattr(compat.losses, name) is _object_at(where), (name, where)
            assert compat.losses.TABLE.resolution(name).origin == where


@pytest.mark.slow  # imports reference_impl's trainers (torch, transformers)
def test_without_trl_the_reference_implementation_stands_in(monkeypatch):
    pytest.importorskip("torch")
    import compat.trl

    monkeypatch.setitem(sys.modules, "trl", None)  # `import trl` now fails as if it were not installed
    table = NameTable("compat.trl", compat.trl._CANDIDATES)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = table.lookup("GRPOTrainer")
    assert trainer is importlib.import_module("reference_impl").GRPOTrainer
    assert table.resolution("GRPOTrainer").is_reference
    assert any(issubclass(w.category, CompatFallbackWarning) for w in caught)
