"""`removed-dataset-formatting`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_13.removed_dataset_formatting import MIGRATION as FORMATTING
from tests.migrations._driver import noop, run


def test_dataset_formatting_todo_with_replacement():
    out, findings = run(FORMATTING, """\
        import os
        from trl.extras.dataset_formatting import FORMAT_MAPPING

        features = FORMAT_MAPPING["chatml"]
    """)
    lines = out.splitlines()
    assert lines[1].startswith("# TODO(trl-compat): trl.extras.dataset_formatting.FORMAT_MAPPING was")
    assert '"chatml": datasets.List(' in findings[0].message and lines[1].endswith(" [removed-dataset-formatting]")
    assert lines[2] == "from trl.extras.dataset_formatting import FORMAT_MAPPING"
    assert lines[4].startswith("# TODO(trl-compat)") and lines[5] == 'features = FORMAT_MAPPING["chatml"]'
    assert len(findings) == 2


def test_dataset_formatting_module_forms_and_noops():
    out, found = run(FORMATTING, """\
        import trl.extras.dataset_formatting as df
        x = df.get_formatting_func_from_dataset(ds, tok)
    """)
    assert out.count("# TODO(trl-compat)") == 2 and any("drop the formatting function" in f.message for f in found)
    noop(FORMATTING, "from trl.extras.profiling import profiling_decorator\n")
    noop(FORMATTING, "dataset_formatting = 1\nFORMAT_MAPPING = {}\n")
    assert run(FORMATTING, "from trl.extras.dataset_formatting import FORMAT_MAPPING\n", target="1.12.0")[0] == (
        "from trl.extras.dataset_formatting import FORMAT_MAPPING\n")
