"""`warmup-ratio`: before/after, no-op cases, the facts from the atlas, and the helper on the installed transformers."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from migrations.atlas import Atlas
from migrations.transformers.v5_15.warmup_ratio import MIGRATION as RULE
from tests.migrations._driver import check, noop, run

ROOT = Path(__file__).resolve().parents[4]


def test_facts():
    atlas = Atlas.load("transformers")
    assert "warmup_ratio" in atlas.config_fields("4.56.2", "transformers.TrainingArguments")
    assert "warmup_ratio" in atlas.config_fields("5.14.1", "transformers.TrainingArguments")
    assert "warmup_ratio" not in atlas.config_fields("5.15.1", "transformers.TrainingArguments")
    assert "warmup_ratio" not in atlas.config_fields("5.24.0", "transformers.TrainingArguments")


def test_literal_ratio_becomes_the_helper():
    check(RULE, """\
        from trl import SFTConfig
        args = SFTConfig(output_dir="o", warmup_ratio=0.03, report_to="none")
        """, """\
        from trl import SFTConfig
        from compat.trl import warmup

        args = SFTConfig(output_dir="o", **warmup(0.03), report_to="none")
        """)


def test_variable_ratio_and_steps_together():
    check(RULE, """\
        from trl import SFTConfig
        args = SFTConfig(
            output_dir="o",
            warmup_steps=a.num_warmup_steps,
            learning_rate=a.lr,
            warmup_ratio=a.warmup_ratio,
            packing=True,
        )
        """, """\
        from trl import SFTConfig
        from compat.trl import warmup

        args = SFTConfig(
            output_dir="o",
            learning_rate=a.lr,
            **warmup(a.warmup_ratio, steps=a.num_warmup_steps),
            packing=True,
        )
        """)


def test_training_arguments_through_the_module():
    check(RULE, """\
        import transformers
        import trl
        args = transformers.TrainingArguments(output_dir="o", warmup_ratio=r)
        """, """\
        import transformers
        import trl
        from compat.trl import warmup

        args = transformers.TrainingArguments(output_dir="o", **warmup(r))
        """)


def test_zero_is_dropped():
    check(RULE, """\
        from trl import SFTConfig
        args = SFTConfig(output_dir="o", warmup_ratio=0.0)
        """, """\
        from trl import SFTConfig
        args = SFTConfig(output_dir="o")
        """)


def test_zero_beside_steps_is_not_dropped():
    out, _ = run(RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", warmup_ratio=0.0, warmup_steps=5)\n')
    assert "**warmup(0.0, steps=5)" in out


def test_under_a_transformers_5_pin_a_literal_ratio_is_warmup_steps(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl>=1.13\ntransformers>=5.0\n")
    src = 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", warmup_ratio=0.1)\n'
    out, _ = run(RULE, src, path=str(tmp_path / "train.py"))
    assert out == 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", warmup_steps=0.1)\n'
    # a variable is not known to be below 1: the helper, not warmup_steps=
    out, _ = run(RULE, src.replace("0.1", "r"), path=str(tmp_path / "train.py"))
    assert "**warmup(r)" in out


def test_marked():
    out, findings = run(RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", warmup_ratio=0.1, **kw)\n')
    assert out.splitlines()[1].startswith("# TODO(trl-compat): warmup_ratio= is gone in transformers 5.15")
    assert "splat" in findings[0].message
    out, findings = run(RULE, 'from trl import SFTConfig\ndef warmup():\n    pass\n'
                              'args = SFTConfig(output_dir="o", warmup_ratio=0.1)\n')
    assert "# TODO(trl-compat)" in out and "binds a name `warmup`" in findings[0].message
    out, findings = run(RULE, 'from trl import SFTConfig\n'
                              'args = SFTConfig(warmup_steps=f(), output_dir=g(), warmup_ratio=0.1)\n')
    assert "# TODO(trl-compat)" in out and "warmup_steps= is passed too" in findings[0].message


def test_noop():
    noop(RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", warmup_steps=0.03)\n')  # already migrated
    noop(RULE, 'import trl\nclass SFTConfig:\n    pass\nargs = SFTConfig(warmup_ratio=0.1)\n')  # a local class
    noop(RULE, 'from transformers import TrainingArguments as TA\nimport trl\n'
               'def f(TA):\n    return TA(warmup_ratio=0.1)\n')  # a parameter shadows the import
    noop(RULE, 'from .trl import SFTConfig\nimport transformers\nargs = SFTConfig(warmup_ratio=0.1)\n')  # vendored
    noop(RULE, 'from trl import SFTConfig\nfrom transformers import get_scheduler\n'
               'get_scheduler("linear", warmup_ratio=0.1)\n')  # not a config
    # a 4.x transformers target (manifest <5): warmup_ratio= is valid, the rule does not run
    noop(RULE, 'from trl import SFTConfig\nimport transformers\nargs = SFTConfig(warmup_ratio=0.1)\n',
         stack={"transformers": "4.57.6"})


def test_the_helper_on_the_installed_transformers():
    import dataclasses

    import transformers
    from compat.trl import warmup

    has_field = any(f.name == "warmup_ratio" for f in dataclasses.fields(transformers.TrainingArguments))
    if has_field:  # <= 5.14: the keywords as written
        assert warmup(0.03) == {"warmup_ratio": 0.03}
        assert warmup(0.1, steps=7) == {"warmup_ratio": 0.1, "warmup_steps": 7}
        return
    assert warmup(0.03) == {"warmup_steps": 0.03}
    assert warmup(0.1, steps=7) == {"warmup_steps": 7} and warmup(0.1, steps=0) == {"warmup_steps": 0.1}
    args = transformers.TrainingArguments(output_dir="o", report_to="none", **warmup(0.03))
    # transformers 4.x's schedule for warmup_ratio=0.03 (`get_warmup_steps`, written out): ceil(steps * ratio)
    assert args.get_warmup_steps(1000) == math.ceil(1000 * 0.03) == 30
    try:
        warmup(1.0)
    except ValueError as exc:
        assert "warmup_steps" in str(exc)
    else:
        raise AssertionError("a ratio of 1 has no 5.15+ spelling")


def test_the_check_accepts_the_rewrite_on_both_ends(tmp_path):
    (tmp_path / "train.py").write_text(
        "from trl import SFTConfig\nfrom compat.trl import warmup\n\n"
        'args = SFTConfig(output_dir="o", **warmup(0.03), report_to="none")\n')
    for release in ("4.56.2", "5.24.0"):
        done = subprocess.run([sys.executable, "-m", "compat.check", str(tmp_path), "--target-trl", "1.16.0",
                               "--target-transformers", release], capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
