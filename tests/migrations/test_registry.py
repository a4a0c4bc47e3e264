"""The registry is derived from the layout: ids from module names, releases from folders, one test file per rule,
and release folders that never import each other."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest
from packaging.version import Version

import migrations
from migrations.base import Options, RuleLayoutError

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "migrations"
TESTS = ROOT / "tests" / "migrations"


def _release_dirs() -> list[Path]:
    return sorted(p for p in RULES.rglob("v*_*") if p.is_dir() and migrations.base.RELEASE_FOLDER.match(p.name))


def test_every_rule_is_its_module_and_sits_in_its_release_folder():
    rules = migrations.all_migrations()
    for rule in rules:
        module = type(rule).__module__
        folder = "v" + rule.release.replace(".", "_")
        assert f".{folder}.{rule.id.replace('-', '_')}" in module + ".", (rule.id, module)
    for folder in _release_dirs():
        for entry in folder.iterdir():
            name = entry.stem if entry.suffix == ".py" else entry.name
            if name.startswith("_") or not (entry.suffix == ".py" or (entry / "__init__.py").exists()):
                continue
            assert name.replace("_", "-") in {r.id for r in rules}, f"{entry} is not a registered rule"


def test_every_rule_has_its_own_test_file():
    for rule in migrations.all_migrations():
        folder = "v" + rule.release.replace(".", "_")
        prefix = () if rule.library == "trl" else (rule.library,)
        path = TESTS.joinpath(*prefix, folder, f"test_{rule.id.replace('-', '_')}.py")
        assert path.exists(), f"{rule.id}: expected its before/after and no-op cases in {path.relative_to(ROOT)}"


def test_release_folders_never_import_each_other():
    """Every module under a release folder imports only migrations.base, migrations.kinds and its own folder."""
    offenders = []
    dirs = _release_dirs()
    assert len(dirs) >= 4
    for folder in dirs:
        own = ".".join(folder.relative_to(ROOT).parts)
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level > 1:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} relative import out of its folder")
                for name in names:
                    parts = name.split(".")
                    if parts[0] != "migrations" or name == own or name.startswith(own + "."):
                        continue
                    if len(parts) > 1 and parts[1] in ("base", "kinds"):
                        continue
                    if len(parts) == 1:
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports the registry ({name})")
                    elif any(migrations.base.RELEASE_FOLDER.match(p) for p in parts[1:3]):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_targets_select_by_release():
    rules = migrations.all_migrations()
    releases = sorted({Version(r.release) for r in rules if r.library == "trl"})
    for target in releases:
        chosen = {m.id for m in migrations.select(Options(target_trl=target))}
        assert chosen == {r.id for r in rules if r.library == "trl" and Version(r.release) <= target
                          and (r.until is None or target < Version(r.until))}


@pytest.fixture
def rule_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A top-level package `tmp_rules` on a temporary path with the registry's layout: one TRL release folder,
    `v0_12` (a release no folder of the real tree has), and one library folder, `peft/v0_14`."""
    root = tmp_path / "tmp_rules"
    (root / "v0_12").mkdir(parents=True)
    (root / "peft" / "v0_14").mkdir(parents=True)
    (root / "kinds").mkdir()
    for init in (root, root / "v0_12", root / "peft", root / "peft" / "v0_14", root / "kinds"):
        (init / "__init__.py").write_text("")
    (root / "kinds" / "shared.py").write_text("VALUE = 1\n")
    (root / "v0_12" / "_private.py").write_text("HELPER = 1\n")
    rule = textwrap.dedent('''\
        from migrations.base import PythonMigration


        class Rule(PythonMigration):
            summary = "a rule found from its module alone"
            triggers = ("nothing-matches-this",)


        MIGRATION = Rule()
    ''')
    (root / "v0_12" / "old_value_head_rename.py").write_text(rule)
    (root / "peft" / "v0_14" / "lora_option_rename.py").write_text(rule)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "tmp_rules"
    for name in [m for m in sys.modules if m == "tmp_rules" or m.startswith("tmp_rules.")]:
        del sys.modules[name]
    migrations.all_migrations.cache_clear()


def test_registry_finds_a_rule_from_its_module_alone(rule_root: str):
    found = migrations.all_migrations(rule_root)
    assert [(r.id, r.release, r.library, r.anchor) for r in found] == [
        ("old-value-head-rename", "0.12", "trl", "old-value-head-rename"),
        ("lora-option-rename", "0.14", "peft", "lora-option-rename"),
    ]
    assert migrations.get("old-value-head-rename", rule_root) is found[0]
    # a TRL target picks the TRL rule; the peft rule needs a peft target
    assert migrations.select(Options(target_trl=Version("1.13.0")), root=rule_root) == (found[0],)
    both = Options(target_trl=Version("1.13.0"), targets=(("peft", Version("0.15.0")),))
    assert hash(both) == hash(Options(target_trl=Version("1.13.0"), targets=(("peft", Version("0.15.0")),)))
    assert migrations.select(both, root=rule_root) == found
    assert not migrations.select(Options(target_trl=Version("0.11.0")), root=rule_root)


def test_registry_refuses_a_module_without_a_rule(rule_root: str, tmp_path: Path):
    (tmp_path / "tmp_rules" / "v0_12" / "helpers.py").write_text("X = 1\n")
    with pytest.raises(RuleLayoutError, match="defines no MIGRATION"):
        migrations.all_migrations(rule_root)


def test_registry_refuses_a_listed_id(rule_root: str, tmp_path: Path):
    (tmp_path / "tmp_rules" / "v0_12" / "named.py").write_text(textwrap.dedent('''\
        from migrations.base import PythonMigration


        class Named(PythonMigration):
            id = "another-name"
            summary = "x"


        MIGRATION = Named()
    '''))
    with pytest.raises(RuleLayoutError, match="sets neither `id` nor `release`"):
        migrations.all_migrations(rule_root)


def test_registry_refuses_duplicate_ids(rule_root: str, tmp_path: Path):
    src = (tmp_path / "tmp_rules" / "v0_12" / "old_value_head_rename.py").read_text()
    (tmp_path / "tmp_rules" / "peft" / "v0_14" / "old_value_head_rename.py").write_text(src)
    with pytest.raises(RuleLayoutError, match="duplicate migration ids"):
        migrations.all_migrations(rule_root)


def test_a_subpackage_without_release_folders_is_never_imported(rule_root: str, tmp_path: Path):
    """Tools that live beside the rules (a package with no v<M>_<m> folder) cost the registry nothing."""
    (tmp_path / "tmp_rules" / "tool").mkdir()
    (tmp_path / "tmp_rules" / "tool" / "__init__.py").write_text("raise RuntimeError('imported by the registry')\n")
    assert len(migrations.all_migrations(rule_root)) == 2
    assert "tmp_rules.tool" not in sys.modules and "tmp_rules.kinds" not in sys.modules


def test_a_runs_last_rule_follows_every_release_folder():
    from migrations.base import RUNS_LAST

    rules = [r for r in migrations.all_migrations() if r.library == "trl"]
    last = [i for i, r in enumerate(rules) if getattr(r, "order", 100) >= RUNS_LAST]
    # model-config-trust-remote-code judges the parser tuples the other rules rewrote; the leftovers rule ends all
    assert last and [rules[i].id for i in last] == ["model-config-trust-remote-code", "trl-api-leftovers"]
    assert last[-1] == len(rules) - 1 and rules[last[-1]].release == "1.13"  # after the 1.14-1.16 folders' rules
    assert any(Version(r.release) > Version("1.13") for r in rules[:last[0]])


def test_the_stack_leftovers_rule_runs_after_every_rule():
    """stack-api-leftovers (transformers' RUNS_LAST rule) follows every library folder and TRL's own last rule."""
    rules = migrations.all_migrations()
    assert rules[-1].id == "stack-api-leftovers" and rules[-1].library == "transformers"
    assert [r.library for r in rules].index("transformers") > [r.library for r in rules].index("accelerate")
    assert rules.index(migrations.get("trl-api-leftovers")) < rules.index(migrations.get("dataloader-configuration"))
