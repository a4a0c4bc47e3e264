"""Before/after and no-op cases for `removed-import-utils`."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from migrations.v0_11.removed_import_utils import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_import_moves_to_transformers():
    check(RULE, """\
        from trl import is_npu_available
        from trl.import_utils import is_npu_available as npu

        if is_npu_available() or npu():
            pass
    """, """\
        from transformers.utils import is_torch_npu_available
        from transformers.utils import is_torch_npu_available as npu

        if is_torch_npu_available() or npu():
            pass
    """)


def test_xpu_moves_to_accelerate():
    check(RULE, """\
        from trl.import_utils import is_npu_available, is_xpu_available

        device = "xpu" if is_xpu_available() else "npu" if is_npu_available() else "cuda"
    """, """\
        from transformers.utils import is_torch_npu_available
        from accelerate.utils import is_xpu_available

        device = "xpu" if is_xpu_available() else "npu" if is_torch_npu_available() else "cuda"
    """)


def test_package_probes_and_version_probes():
    out, _ = run(RULE, """\
        from trl.import_utils import is_peft_available, is_pil_available, is_torch_greater_2_0

        if is_peft_available() and is_pil_available() and is_torch_greater_2_0():
            pass
    """)
    assert "from transformers.utils import is_peft_available, is_vision_available" in out
    assert "from compat.trl import is_torch_greater_2_0\n" in out
    assert "is_vision_available() and is_torch_greater_2_0()" in out
    assert "TODO(trl-compat)" not in out


def test_version_probes_without_a_copy_are_marked():
    out, _ = run(RULE, """\
        from trl.import_utils import is_torch_greater_2_0, is_transformers_greater_than

        if is_transformers_greater_than("4.30") and is_torch_greater_2_0():
            pass
    """)
    assert "from compat.trl import is_torch_greater_2_0\n" in out
    assert "from trl.import_utils import is_transformers_greater_than\n" in out
    assert out.count("# TODO(trl-compat): removed in TRL 0.12: compare packaging.version") == 2


def test_torch_probe_noops():
    noop(RULE, """\
        from compat.trl import is_torch_greater_2_0
        from .import_utils import is_transformers_greater_than
        is_torch_greater_2_0()
    """)
    noop(RULE, """\
        def is_torch_greater_2_0():
            return True
        is_torch_greater_2_0()
    """)


def test_noops():
    noop(RULE, """\
        from accelerate.utils import is_npu_available
        is_npu_available()
    """)
    noop(RULE, """\
        from .trl.import_utils import is_npu_available

        def is_npu_available_twice():
            return "is_npu_available"
    """)


def test_wandb_probe_moves_to_the_compat_copy():
    check(RULE, """\
        from trl.import_utils import is_wandb_available

        if is_wandb_available():
            import wandb
    """, """\
        from compat.trl import is_wandb_available

        if is_wandb_available():
            import wandb
    """)


def test_the_wandb_copy_answers_as_find_spec(monkeypatch):
    import importlib.util
    import warnings

    import compat.trl

    real = importlib.util.find_spec
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for present in (True, False):
            monkeypatch.setattr(importlib.util, "find_spec",
                                lambda name, *a: (object() if present else None) if name == "wandb" else real(name, *a))
            assert compat.trl.is_wandb_available() is present
            # TRL 0.10's probe ignores the switch transformers' probe honours
            monkeypatch.setenv("WANDB_DISABLED", "true")
            assert compat.trl.is_wandb_available() is present


def test_the_probes_trl_exported_at_its_top_level_move_the_same_way():
    """TRL 0.4-0.10 re-exported the `trl.import_utils` probes from `trl` (optimum-habana's Gaudi PPO config:
    `from trl import PPOConfig, is_wandb_available`)."""
    check(RULE, """\
        from trl import SFTConfig, is_wandb_available, is_peft_available as peft_ok

        if is_wandb_available() and peft_ok():
            pass
    """, """\
        from trl import SFTConfig
        from compat.trl import is_wandb_available
        from transformers.utils import is_peft_available as peft_ok

        if is_wandb_available() and peft_ok():
            pass
    """)
    out, _ = run(RULE, """\
        import trl

        if trl.is_diffusers_available() and trl.is_pil_available():
            pass
    """)
    assert "compat.trl.is_diffusers_available() and transformers.utils.is_vision_available()" in out
    assert "TODO(trl-compat)" not in out


def test_top_level_probe_noops():
    noop(RULE, "from transformers.utils import is_peft_available\n\nok = is_peft_available()\n")
    noop(RULE, "from compat.trl import is_wandb_available\n\nok = is_wandb_available()\n")
    noop(RULE, "def is_wandb_available():\n    return False\n\n\nok = is_wandb_available()\n")
    noop(RULE, "from mylib.trl import is_peft_available\n\nok = is_peft_available()\n")
    noop(RULE, "from .trl import is_wandb_available\n\nok = is_wandb_available()\n")


def test_later_package_probes_move_to_transformers_too():
    """FactAlign's KTO trainer copy: `from trl.import_utils import is_sklearn_available` (gone in 0.11)."""
    check(RULE, """\
        from trl.import_utils import is_sklearn_available, is_openai_available
    """, """\
        from transformers.utils import is_sklearn_available, is_openai_available
    """)


def test_every_probe_it_moves_is_exported_by_transformers_utils():
    """Each successor is exported by `transformers.utils` in the oldest transformers the targets allow (4.56.2, the
    cached wheel's `utils/__init__.py`) and in the installed one (the atlas cannot say: it holds `transformers.utils`
    open, any name resolves there)."""
    import zipfile

    import transformers.utils

    from migrations.v0_11.removed_import_utils import _PROBES

    wheel = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels")) / "transformers-4.56.2-py3-none-any.whl"
    if not wheel.exists():
        pytest.skip("transformers 4.56.2 wheel not cached (make .cache/wheels/.downloaded)")
    init = zipfile.ZipFile(wheel).read("transformers/utils/__init__.py").decode()
    for new, _release in _PROBES.values():
        assert re.search(rf"^\s+{new},$", init, re.M), new
        assert callable(getattr(transformers.utils, new)), new


def test_the_diffusers_copy_answers_as_trl_did(monkeypatch):
    """TRL 0.11 - 0.23: `find_spec` and the installed distribution's metadata (transformers'
    `_is_package_available`, which those releases called); transformers 4.56 has no such probe to move to."""
    import importlib.metadata
    import importlib.util

    import compat.trl

    real_spec, real_version = importlib.util.find_spec, importlib.metadata.version
    for spec, installed in ((True, True), (True, False), (False, True)):
        def version(name, *a, installed=installed):
            if name != "diffusers":
                return real_version(name, *a)
            if installed:
                return "0.30.0"
            raise importlib.metadata.PackageNotFoundError(name)

        monkeypatch.setattr(importlib.util, "find_spec",
                            lambda name, *a, spec=spec: (object() if spec else None) if name == "diffusers"
                            else real_spec(name, *a))
        monkeypatch.setattr(importlib.metadata, "version", version)
        assert compat.trl.is_diffusers_available() is (spec and installed)


def test_vllm_server_probes_move_to_compat_copies():
    """willccbb/verifiers' `vllm_serve.py` (TRL 0.16 era): `from trl.import_utils import is_fastapi_available,
    is_pydantic_available, is_uvicorn_available`, gone in 1.11; llm_blender's probe under both of its names."""
    check(RULE, """\
        from trl.import_utils import is_fastapi_available, is_pydantic_available, is_uvicorn_available
        from trl import is_llm_blender_available
        import trl
        ok = trl.import_utils.is_vllm_ascend_available() or trl.import_utils.is_llmblender_available()
    """, """\
        from compat.trl import is_fastapi_available, is_pydantic_available, is_uvicorn_available
        from compat.trl import is_llm_blender_available
        import trl
        import compat.trl

        ok = compat.trl.is_vllm_ascend_available() or compat.trl.is_llm_blender_available()
    """)


def test_the_compat_probes_are_trl_1_0_checks(monkeypatch):
    """The oracle: TRL 1.0.0's `_is_package_available(name)` without a version is `find_spec(name) is not None`
    (read in the wheel when present); each copy answers by its package's import spec."""
    import importlib.util

    import compat.trl

    probes = {"fastapi": compat.trl.is_fastapi_available, "pydantic": compat.trl.is_pydantic_available,
              "uvicorn": compat.trl.is_uvicorn_available, "vllm_ascend": compat.trl.is_vllm_ascend_available,
              "llm_blender": compat.trl.is_llm_blender_available}
    import os
    import zipfile
    from pathlib import Path

    wheel = Path(os.environ.get("TRL_COMPAT_WHEELS", Path(__file__).resolve().parents[3] / ".cache" / "wheels")) \
        / "trl-1.0.0-py3-none-any.whl"
    if wheel.exists():
        source = zipfile.ZipFile(wheel).read("trl/import_utils.py").decode()
        assert "    spec = importlib.util.find_spec(pkg_name)\n    package_exists = spec is not None\n" in source
        for package in probes:
            assert f'_is_package_available("{package}")' in source, package
    for present in (True, False):
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, present=present: object() if present else None)
        assert all(probe() is present for probe in probes.values())
