"""`removed-is-torch-tpu-available`: marked at the import and each use; the successor it names exists on the floor and
the newest release."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v4_51.removed_is_torch_tpu_available import (
    MIGRATION as RULE,
)
from tests.migrations._driver import noop, run

PREFIX = "# TODO(trl-compat): is_torch_tpu_available was removed"  # the marker is cut to 100 columns; the finding has it all
MESSAGE = "is_torch_tpu_available was removed in transformers 4.51"


def test_import_and_use_are_marked():
    # MedicalGPT pretraining.py
    src = "from transformers import Trainer, is_torch_tpu_available\n\nif is_torch_tpu_available():\n    pass\n"
    out, findings = run(RULE, src)
    lines = out.splitlines()
    assert lines[0].startswith(PREFIX) and lines[1] == src.splitlines()[0]
    assert lines[3].startswith(PREFIX) and lines[4] == src.splitlines()[2]
    assert len(findings) == 2 and not any(f.changed for f in findings)
    assert all(f.message.startswith(MESSAGE) for f in findings)


def test_noop():
    noop(RULE, "from transformers import is_torch_xla_available\n")
    noop(RULE, "def is_torch_tpu_available():\n    return False\n\nis_torch_tpu_available()\n")


def test_facts():
    atlas = Atlas.load("transformers")
    assert atlas.has("4.50.3", "transformers.is_torch_tpu_available")
    for release in ("4.51.3", "4.56.2", "5.24.0"):
        assert not atlas.has(release, "transformers.is_torch_tpu_available"), release
    for release in ("4.56.2", "5.24.0"):  # its signature (check_is_tpu=) lives in a module the atlas does not read
        assert atlas.has(release, "transformers.is_torch_xla_available"), release
    import inspect

    import transformers

    assert "check_is_tpu" in inspect.signature(transformers.is_torch_xla_available).parameters
