"""Drive one rule over a source string through the engine (`compat.migrate.migrate_source`), with strict checks.

Every call asserts that the engine accepted the output (it re-parses it with libcst and `ast`) and that a second run
changes nothing (`verify_idempotent`). A rule the target TRL does not need is not run at all, as in a real run.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Finding, Migration, Options

#: The library targets a library rule runs under unless a test says otherwise (the newest releases in the atlas).
STACK = {"transformers": "5.24.0", "peft": "0.21.2", "accelerate": "1.15.0"}


def run(rule: Migration, src: str, target: str = "1.16.0", dedent: bool = True,
        path: str = "example.py", stack: dict[str, str] | None = None) -> tuple[str, list[Finding]]:
    """Apply `rule` to `src` for `--target-trl target` (and the library targets `stack`, default `STACK`);
    returns (new source, findings)."""
    if dedent:
        src = textwrap.dedent(src)
    targets = {**STACK, **(stack or {})}
    options = Options(target_trl=Version(target), targets=tuple((k, Version(v)) for k, v in sorted(targets.items())))
    if not rule.applies(options):
        return src, []
    result = migrate_source(src, options=options, rules=[rule], path=path, verify_idempotent=True)
    assert result.ok, result.errors
    return result.text, result.findings


def check(rule: Migration, before: str, after: str, target: str = "1.16.0",
          stack: dict[str, str] | None = None) -> list[Finding]:
    out, findings = run(rule, before, target, stack=stack)
    assert out == textwrap.dedent(after), f"\n--- got ---\n{out}\n--- expected ---\n{textwrap.dedent(after)}"
    return findings


def noop(rule: Migration, src: str, target: str = "1.16.0", stack: dict[str, str] | None = None) -> None:
    out, findings = run(rule, src, target, stack=stack)
    assert out == textwrap.dedent(src), f"expected no change, got:\n{out}"
    assert not [f for f in findings if f.changed], findings


def assert_no_successor(rule: Migration, module: str, name: str, release: str) -> None:
    """A removed TRL module with no successor: the import and each use get a marker, the code stays as it is."""
    src = f"from {module} import {name}\n\n\ntrainer = {name}(model)\n"
    out, findings = run(rule, src)
    lines = out.splitlines()
    assert lines[0].startswith(f"# TODO(trl-compat): {module}")
    assert findings[0].message.startswith(f"{module} was removed in TRL {release}")
    assert lines[0].endswith(f" [{rule.id}]") and len(lines[0]) <= 100
    assert lines[1] == f"from {module} import {name}"
    assert lines[4].startswith("# TODO(trl-compat):") and lines[5] == f"trainer = {name}(model)"
    assert len(findings) == 2 and not any(f.changed for f in findings)


def assert_moved_to_compat(rule: Migration, module: str, trainer: str, config: str) -> None:
    """A removed TRL package whose trainer and config `compat.trl` keeps: every import form moves there on a 1.14+
    target, nothing else in the code changes, and look-alikes are left alone; a 1.13 target keeps TRL's path."""
    package, _, stem = module.rpartition(".")
    check(rule, f"""\
        from {module} import {config}, {trainer}

        trainer = {trainer}(model, args={config}(output_dir="out"), train_dataset=ds)
    """, f"""\
        from compat.trl import {config}, {trainer}

        trainer = {trainer}(model, args={config}(output_dir="out"), train_dataset=ds)
    """)
    check(rule, f"""\
        from {module}.{stem}_trainer import {trainer} as T
        from trl import DPOTrainer
        T(model)
    """, f"""\
        from compat.trl import {trainer} as T
        from trl import DPOTrainer
        T(model)
    """)
    check(rule, f"""\
        import {module} as m
        from {package} import {stem}, online_dpo

        t = m.{trainer}(model, args={stem}.{config}())
    """, f"""\
        from {package} import online_dpo
        import compat.trl

        t = compat.trl.{trainer}(model, args=compat.trl.{config}())
    """)
    out, findings = run(rule, f"from {module}.{stem}_trainer import _private_helper\n_private_helper()\n")
    assert out.startswith(f"# TODO(trl-compat): {module} was removed in TRL 1.14")
    assert out.splitlines()[0].endswith(f" [{rule.id}]") and [f.severity for f in findings] == ["manual"] * 2  # import, use
    noop(rule, f"from compat.trl import {trainer}, {config}\n{trainer}(args={config}())\n")
    noop(rule, f"from mylib.{stem} import {trainer}  # not TRL's\n{trainer}()\n")
    noop(rule, f"class {trainer}:\n    pass\n\n\n{trainer}(model)\n")
    noop(rule, f"def make({trainer}):\n    return {trainer}(model)  # a parameter, not an import\n")
    noop(rule, f"{stem} = load('{stem}')\n{stem}.{trainer}()\n")
    src = f"from {module} import {trainer}\n"
    assert run(rule, src, target="1.13.0") == (src, [])


def run_file(rule: Migration, text: str, path: str | Path):
    """Apply `rule` to `text` as the file at `path` (manifest rules that read the files around it), default target;
    returns the engine's result (checked to be accepted and idempotent)."""
    result = migrate_source(text, options=Options(), rules=[rule], path=str(path), verify_idempotent=True)
    assert result.ok, result.errors
    return result


def assert_check_passes(folder: Path, source: str, transformers: tuple[str, ...] = ("4.56.2", "5.24.0"),
                        target_trl: str = "1.16.0") -> None:
    """`source`, written to `folder/train.py`, passes `python -m compat.check` (a subprocess, as users run it) for
    `target_trl` with each transformers release of `transformers` (the ends a migrated manifest allows)."""
    import subprocess
    import sys

    (folder / "train.py").write_text(source)
    root = Path(__file__).resolve().parents[2]
    for release in transformers:
        done = subprocess.run([sys.executable, "-m", "compat.check", str(folder), "--target-trl", target_trl,
                               "--target-transformers", release], capture_output=True, text=True, cwd=root,
                              check=False)
        assert done.returncode == 0, done.stdout + done.stderr
