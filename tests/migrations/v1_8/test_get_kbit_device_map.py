"""Before/after and no-op cases for `get-kbit-device-map`."""

from __future__ import annotations

from migrations.v1_8.get_kbit_device_map import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_moves_to_compat_and_keeps_the_survivors():
    check(RULE, """\
        from trl import ModelConfig, get_kbit_device_map, get_quantization_config

        quantization_config = get_quantization_config(model_args)
        device_map = get_kbit_device_map() if quantization_config is not None else None
    """, """\
        from trl import ModelConfig, get_quantization_config
        from compat.trl import get_kbit_device_map

        quantization_config = get_quantization_config(model_args)
        device_map = get_kbit_device_map() if quantization_config is not None else None
    """)


def test_noops():
    noop(RULE, """\
        from trl import get_peft_config, get_quantization_config
        get_peft_config(a)
        get_quantization_config(a)
    """)
    noop(RULE, """\
        from .utils import get_kbit_device_map
        get_kbit_device_map()
    """)


def test_copy_on_cpu_is_none():
    import torch

    import compat.trl

    if torch.cuda.is_available():
        import pytest

        pytest.skip("CPU-only check")
    assert compat.trl.get_kbit_device_map() is None
