"""`removed-dataset-formatting`: before/after and no-op cases (imports move to `compat.trl`'s copies)."""

from __future__ import annotations

import pytest

from migrations.v1_13.removed_dataset_formatting import MIGRATION as FORMATTING
from tests.migrations._driver import check, noop, run


@pytest.mark.parametrize("target", ["1.13.0", "1.16.0"])
def test_functions_and_mapping_move_to_compat(target):
    # TRL 0.11-0.12's examples/scripts/reward_modeling.py and unpaired_rlhf's kto.py import the function
    findings = check(FORMATTING, """\
        import os
        from trl.extras.dataset_formatting import FORMAT_MAPPING, conversations_formatting_function

        features = FORMAT_MAPPING["chatml"]
        chosen_fn = conversations_formatting_function(tokenizer, "chosen")
    """, """\
        import os
        from compat.trl import FORMAT_MAPPING, conversations_formatting_function

        features = FORMAT_MAPPING["chatml"]
        chosen_fn = conversations_formatting_function(tokenizer, "chosen")
    """, target=target)
    assert findings and all(f.severity != "manual" for f in findings)


def test_aliases_and_attribute_uses():
    check(FORMATTING, """\
        from trl.extras.dataset_formatting import get_formatting_func_from_dataset as pick, \\
            instructions_formatting_function
        fmt = pick(ds, tok) or instructions_formatting_function(tok)
    """, """\
        from compat.trl import get_formatting_func_from_dataset as pick, instructions_formatting_function
        fmt = pick(ds, tok) or instructions_formatting_function(tok)
    """)


def test_module_import_and_noops():
    check(FORMATTING, """\
        import trl.extras.dataset_formatting as df
        x = df.get_formatting_func_from_dataset(ds, tok)
    """, """\
        import compat.trl

        x = compat.trl.get_formatting_func_from_dataset(ds, tok)
    """)
    # a name the module never had: marked, left as it is
    out, _ = run(FORMATTING, "from trl.extras.dataset_formatting import something_else\nsomething_else(ds)\n")
    assert out.startswith("# TODO(trl-compat)") and "something_else" in out
    noop(FORMATTING, "from trl.extras.profiling import profiling_decorator\n")
    noop(FORMATTING, "dataset_formatting = 1\nFORMAT_MAPPING = {}\n")
    # a local module of the same name is not TRL's
    noop(FORMATTING, "from dataset_formatting import conversations_formatting_function\n")
    noop(FORMATTING, "from .extras.dataset_formatting import conversations_formatting_function\n")
    # already migrated
    noop(FORMATTING, "from compat.trl import conversations_formatting_function\n")
    assert run(FORMATTING, "from trl.extras.dataset_formatting import FORMAT_MAPPING\n", target="1.12.0")[0] == (
        "from trl.extras.dataset_formatting import FORMAT_MAPPING\n")
