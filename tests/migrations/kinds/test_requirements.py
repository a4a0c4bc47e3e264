"""`migrations.kinds.requirements`: raising specifiers to the floors of a TRL line, against `compat.floors`."""

from __future__ import annotations

from packaging.version import Version

from compat import floors
from migrations.kinds.requirements import floors_for, rewrite_poetry, rewrite_requirement, target_line


def _floor(package: str, line: str) -> str:
    """The floor specifier of `package` for a TRL line, read from compat.floors (the table itself)."""
    for row in floors.PROFILES[line].floors:
        if row.package == package and row.specifier and not row.when_installed and not row.trl_versions:
            return str(row.specifier)
    raise LookupError(package)


def test_floors_come_from_compat_floors():
    table = floors_for(Version("1.16.0"))
    assert str(table["peft"].specifier) == _floor("peft", "1.16")
    assert target_line(Version("1.16.0")) == "1.16"
    assert target_line(Version("9.0")) == floors.NEWEST_LINE


def test_raise_keep_and_pin():
    table = floors_for(Version("1.16.0"))
    peft = _floor("peft", "1.16")
    raised = rewrite_requirement("peft>=0.10", table)
    assert raised is not None and raised.text == f"peft{peft}" and raised.package == "peft"
    assert rewrite_requirement("peft>=99", table) is None  # already above the floor
    assert rewrite_requirement("numpy>=1", table) is None  # not ours
    pinned = rewrite_requirement("trl==0.11.4", table)
    assert pinned is not None and pinned.text == "trl==1.16.0" and pinned.outcome.unsatisfiable


def test_poetry_constraint():
    table = floors_for(Version("1.16.0"))
    out = rewrite_poetry("^0.10", table["peft"])
    assert out is not None and out.new == "^" + str(table["peft"].lowest)


def test_a_transformers_4_target_caps_every_transformers_requirement_below_5():
    from packaging.version import Version

    from migrations.kinds.requirements import adjust, floors_for

    four = floors_for(Version("1.16.0"), transformers=Version("4.57.6"))["transformers"]
    assert adjust("==4.31.0", four).new == ">=4.56.2,<5"  # an era pin: the window, not an exact successor
    assert adjust(">=4.31", four).new == ">=4.56.2,<5"
    assert adjust(">=4.56.2", four).new == ">=4.56.2,<5"
    assert adjust("", four).new == ">=4.56.2,<5"
    assert adjust(">=4.56.2,<4.58", four) is None  # already below 5
    five = floors_for(Version("1.16.0"), transformers=Version("5.24.0"))["transformers"]
    assert adjust(">=4.56.2", five) is None and adjust("", five) is None
    assert floors_for(Version("1.16.0"))["transformers"].upper == ""


def test_never_a_single_version_range_the_file_did_not_ask_for():
    table = floors_for(Version("1.16.0"))
    low = str(table["transformers"].lowest)
    raised = rewrite_requirement(f"transformers>=4.40,<={low}", table)  # raising >= would leave ==floor
    assert raised is not None and raised.text == f"transformers>={low}"
    assert any("would pin the floor" in m for m in raised.outcome.messages)
    assert rewrite_requirement(f"transformers>={low},<={low}", table) is None  # pinned exactly by the file: kept
    upper = rewrite_requirement("transformers>=4.40,<4.0", table)  # an upper bound below the floor never stays
    assert upper is not None and "<4.0" not in upper.text
