"""`migrate_paths` on real files: encodings, atomic writes, failures isolated, symlinks, the walk, .gitignore,
the dirty-tree guard, target detection from the repo's pins, the process pool."""

from __future__ import annotations

import codecs
import os
import stat
import subprocess

import pytest
from packaging.version import Version

from compat.migrate import detect_target, migrate_paths
from compat.migrate.runner import unified_diff
from compat.migrate.target import target_from_specifier
from packaging.specifiers import SpecifierSet

from ._util import NEW_SFT, OLD_SFT, RULE, commit_all, git_repo

OLD_BODY = "cfg = SFTConfig(loss_type='chunked_nll')"


def write(path, data: bytes | str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def migrate(*paths, **kw):
    return migrate_paths([str(p) for p in paths], rules=[RULE], **kw)


@pytest.mark.parametrize(
    "name, data",
    [
        ("bom.py", codecs.BOM_UTF8 + b"from trl import SFTConfig\n" + OLD_BODY.encode() + b"\n"),
        ("crlf.py", b"from trl import SFTConfig\r\n" + OLD_BODY.encode() + b"\r\n"),
        ("mixed.py", b"from trl import SFTConfig\r\n\nif 1:\n\t" + OLD_BODY.encode() + b"\r\n\tpass"),
        ("latin1.py", b"# -*- coding: latin-1 -*-\nfrom trl import SFTConfig\nname = '\xe9t\xe9'\n" + OLD_BODY.encode()),
        ("cp1252.py", b"# vim: set fileencoding=cp1252 :\nfrom trl import SFTConfig\nq = '\x93x\x94'\r\n" + OLD_BODY.encode() + b"\r\n"),
    ],
)
def test_encodings_bom_newlines_kept_byte_for_byte(tmp_path, name, data):
    path = write(tmp_path / name, data)
    report = migrate(path)
    assert report.exit_code == 0 and report.files[0].written, report.files[0].errors
    assert path.read_bytes() == data.replace(b"'chunked_nll'", b"'nll'")


def test_unchanged_file_is_not_written_and_mode_is_kept(tmp_path):
    changed = write(tmp_path / "a.py", OLD_SFT)
    os.chmod(changed, 0o751)
    same = write(tmp_path / "b.py", "x = 'chunked_nll is discussed'  # no SFTConfig\n".replace("'chunked", "'the chunked"))
    os.utime(same, (1_000_000, 1_000_000))
    inode = os.stat(changed).st_ino
    report = migrate(tmp_path)
    assert [f.status for f in report.files] == ["changed", "unchanged"]
    assert stat.S_IMODE(os.stat(changed).st_mode) == 0o751
    assert os.stat(changed).st_ino != inode  # replaced by rename, not rewritten in place
    assert os.stat(same).st_mtime == 1_000_000
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_failures_are_isolated_and_reported(tmp_path):
    good = write(tmp_path / "good.py", OLD_SFT)
    broken = write(tmp_path / "broken.py", "x = 'chunked_nll'\ndef (:\n")
    undecodable = write(tmp_path / "bad_utf8.py", b"x = 'chunked_nll \xff'\n")
    bad_cookie = write(tmp_path / "cookie.py", b"# coding: no-such-codec\nx = 'chunked_nll'\n")
    unreadable = write(tmp_path / "secret.py", OLD_SFT)
    os.chmod(unreadable, 0)
    report = migrate(tmp_path)
    by_name = {os.path.basename(f.path): f for f in report.files}
    assert by_name["good.py"].written and good.read_text() == NEW_SFT
    assert by_name["broken.py"].errors[0].kind == "parse" and by_name["broken.py"].errors[0].line == 2
    assert by_name["bad_utf8.py"].errors[0].kind == "decode"
    assert by_name["cookie.py"].errors[0].kind == "decode"
    if os.geteuid() != 0:  # root reads anything
        assert by_name["secret.py"].errors[0].kind == "read"
    assert broken.read_text() == "x = 'chunked_nll'\ndef (:\n"
    assert undecodable.read_bytes() == b"x = 'chunked_nll \xff'\n" and bad_cookie.read_bytes().startswith(b"# coding")
    assert report.exit_code == 2 and report.totals["failed"] >= 3


def test_text_that_no_longer_fits_the_encoding_is_refused(tmp_path):
    from compat.migrate.runner import _process
    from migrations.base import Options

    class Euro(type(RULE)):
        id = "euro"

        def transform(self, wrapper, ctx):
            import libcst as cst

            return cst.parse_module(wrapper.module.code.replace("chunked_nll", "€"))

    out = _process("x.py", b"# coding: latin-1\nx = 'chunked_nll'\n", Options(), [Euro()], False)
    assert out.new_bytes is None and out.errors[0].kind == "encode"


def test_symlinked_file_rewritten_through_the_link_once(tmp_path):
    real = write(tmp_path / "pkg" / "real.py", OLD_SFT)
    link = tmp_path / "pkg" / "link.py"
    link.symlink_to("real.py")
    (tmp_path / "alias").symlink_to("pkg", target_is_directory=True)
    outside = write(tmp_path.parent / f"{tmp_path.name}-outside" / "o.py", OLD_SFT)
    (tmp_path / "pkg" / "escape").symlink_to(outside.parent, target_is_directory=True)
    report = migrate(tmp_path, link)  # real.py, link.py, alias/real.py, alias/link.py, the link again: one file
    assert [f.path for f in report.files] == [str(real)]
    assert link.is_symlink() and real.read_text() == NEW_SFT
    assert outside.read_text() == OLD_SFT  # a link out of the given roots is not followed
    write(real, OLD_SFT)
    report = migrate(link)  # only the link named: rewritten through it, the link stays a link
    assert [f.path for f in report.files] == [str(link)] and report.files[0].written
    assert link.is_symlink() and os.readlink(link) == "real.py" and real.read_text() == NEW_SFT


def test_walk_skips_vendored_folders_and_honours_gitignore_and_exclude(tmp_path):
    repo = git_repo(tmp_path / "repo")
    write(repo / ".gitignore", "generated/\n*_old.py\n!keep_old.py\n")
    write(repo / "sub" / ".gitignore", "local.py\n")
    wanted = ["a.py", "keep_old.py", "sub/b.py", "nb/n.ipynb"]
    skipped = ["generated/x.py", "x_old.py", "sub/local.py", "build/x.py", "dist/x.py", "node_modules/p/x.py",
               ".venv/lib/x.py", "myenv/lib/x.py", "lib/site-packages/x.py", ".git/x.py", "notes/draft.py",
               "unsloth_compiled_cache/UnslothPPOTrainer.py", "trl/__init__.py", "trl/trainer/ppo_trainer.py"]
    wanted.append("third_party/trl/readme_example.py")  # a folder named trl without __init__.py is not a package
    for rel in wanted + skipped:
        write(repo / rel, "{}" if rel.endswith(".ipynb") else "x = 1\n")
    write(repo / "myenv" / "pyvenv.cfg", "home = /usr\n")
    report = migrate(repo, exclude=["notes/"])
    found = sorted(os.path.relpath(f.path, repo) for f in report.files)
    assert found == sorted(wanted)
    # a subfolder still obeys the .gitignore above it
    report = migrate(repo / "sub")
    assert [os.path.basename(f.path) for f in report.files] == ["b.py"]
    # an ignored folder named explicitly is walked (the user asked for it)
    report = migrate(repo / "generated")
    assert [os.path.basename(f.path) for f in report.files] == ["x.py"]


def test_a_gitignore_line_git_cannot_use_matches_nothing_and_does_not_stop_the_walk(tmp_path):
    """nganngants/smes_ppo's `.gitignore` has a line ending in a lone backslash (`...user_without_context.jsonnet\\`):
    `pathspec` refuses it and the migrator stopped with a traceback. git's wildmatch aborts on such a pattern (it
    matches nothing; `git status --ignored` agrees), so the walk leaves it out and keeps every other line."""
    repo = git_repo(tmp_path / "repo")
    write(repo / ".gitignore", "*_old.py\nconfigs/user.py\\\n!keep_old.py\n")
    for rel in ("a.py", "x_old.py", "keep_old.py", "configs/user.py"):
        write(repo / rel, "x = 1\n")
    report = migrate(repo)
    assert sorted(os.path.relpath(f.path, repo) for f in report.files) == ["a.py", "configs/user.py", "keep_old.py"]
    git = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=repo,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert "!! x_old.py" in git and "?? configs/user.py" in git and "?? keep_old.py" in git


def test_walk_skips_experiment_trackers_run_records(tmp_path):
    """W&B keeps each run's environment and code under `wandb/run-<date>_<time>-<id>/files/` (a real PPO-era
    repository, shwan333/LLMCRS, commits 45 of them): a record of a past run, not the project's manifest, so its
    `requirements.txt` is neither raised nor read for the target; MLflow's `mlruns/` likewise."""
    from compat.migrate.walk import iter_targets

    repo = git_repo(tmp_path / "repo")
    records = ["code/wandb/run-20250122_135820-uq5is8y3/files/requirements.txt",
               "wandb/offline-run-20250408_104725-nfv74dy4/files/requirements.txt",
               "wandb/latest-run/files/code/train.py", "mlruns/0/abc/artifacts/model/requirements.txt"]
    kept = ["requirements.txt", "code/train.py", "wandb_utils/run-20250122_135820-uq5is8y3/x.py",
            "code/wandb/helpers.py"]
    for rel in records + kept:
        write(repo / rel, "trl==0.7.10\n" if rel.endswith(".txt") else "x = 1\n")
    found = sorted(os.path.relpath(t.path, repo) for t in iter_targets([str(repo)], wanted=lambda p: True))
    assert found == sorted(kept)


def test_walk_enters_a_librarys_trl_subpackage_but_not_a_vendored_copy(tmp_path):
    """`optimum/habana/trl/` (a package's subpackage wrapping TRL, no `__version__`) is imported as
    `optimum.habana.trl`: its files' `from trl import X` is the installed TRL, so they are migrated. A `trl/` at a
    top level, or one whose `__init__.py` sets `__version__` (TRL's own does), stays a vendored copy, never entered."""
    repo = git_repo(tmp_path / "repo")
    write(repo / "optimum" / "__init__.py", "")
    write(repo / "optimum" / "habana" / "__init__.py", "")
    write(repo / "optimum" / "habana" / "trl" / "__init__.py", "from .trainer import GaudiSFTConfig\n")
    wrapper = write(repo / "optimum" / "habana" / "trl" / "trainer.py", OLD_SFT)
    write(repo / "third_party" / "__init__.py", "")
    write(repo / "third_party" / "trl" / "__init__.py", '__version__ = "0.4.7"\nfrom .trainer import PPOTrainer\n')
    copy = write(repo / "third_party" / "trl" / "trainer" / "sft.py", OLD_SFT)
    write(repo / "trl" / "__init__.py", "from .core import x\n")  # top level: `import trl` from the root is this
    top = write(repo / "trl" / "sft.py", OLD_SFT)
    report = migrate(repo, allow_dirty=True)
    found = sorted(os.path.relpath(f.path, repo) for f in report.files)
    assert found == sorted(["optimum/__init__.py", "optimum/habana/__init__.py", "optimum/habana/trl/__init__.py",
                            "optimum/habana/trl/trainer.py", "third_party/__init__.py"])
    assert wrapper.read_text() == NEW_SFT
    assert copy.read_text() == OLD_SFT and top.read_text() == OLD_SFT


@pytest.mark.slow
def test_dirty_tree_guard(tmp_path):
    repo = git_repo(tmp_path / "repo")
    clean = write(repo / "clean.py", OLD_SFT)
    dirty = write(repo / "dirty.py", "x = 1\n")
    write(repo / ".gitignore", "local_*.py\n")
    commit_all(repo)
    write(dirty, OLD_SFT)  # modified, not committed
    untracked = write(repo / "new.py", OLD_SFT)
    ignored = write(repo / "local_settings.py", OLD_SFT)  # named explicitly: git ignores it, so has no copy of it
    report = migrate(repo, ignored)
    assert report.exit_code == 2
    assert report.refused_dirty == {
        str(dirty): "modified", str(untracked): "untracked", str(ignored): "untracked (ignored by git)"
    }
    assert clean.read_text() == OLD_SFT and dirty.read_text() == OLD_SFT  # nothing written at all
    report = migrate(repo, allow_dirty=True)
    assert report.exit_code == 0 and clean.read_text() == dirty.read_text() == untracked.read_text() == NEW_SFT
    assert ignored.read_text() == OLD_SFT  # not named this time: the walk honours .gitignore


def test_check_and_diff_modes_write_nothing(tmp_path):
    path = write(tmp_path / "a.py", OLD_SFT.replace("\n", "\r\n").rstrip("\r\n"))
    before = path.read_bytes()
    check = migrate(path, mode="check")
    assert check.exit_code == 1 and check.files[0].status == "changed" and not check.files[0].written
    diff = migrate(path, mode="diff")
    assert diff.exit_code == 1 and path.read_bytes() == before
    assert diff.files[0].diff.endswith(b"+" + b"cfg = SFTConfig(output_dir=\"out\", loss_type=\"nll\")\n\\ No newline at end of file\n")


def test_unified_diff_keeps_crlf_bytes():
    d = unified_diff("x.py", b"a = 1\r\nb = 2\r\n", b"a = 1\r\nb = 3\r\n")
    assert b"-b = 2\r\n+b = 3\r\n" in d and d.startswith(b"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n")


@pytest.mark.parametrize(
    "spec, expected",
    [("==1.14.2", "1.14.2"), (">=1.14,<1.16", "1.15.0"), (">=1.14", "1.16.0"), ("~=1.13.0", "1.13.0"),
     ("==0.11", None), ("<1.0", None), ("", "1.16.0"), ("==1.17.0", "1.17.0")],
)
def test_target_from_a_pin(spec, expected):
    got = target_from_specifier(SpecifierSet(spec))
    assert (str(got) if got else None) == expected


def test_target_detected_from_repo_manifests(tmp_path):
    repo = git_repo(tmp_path / "repo")
    write(repo / "src" / "x.py", "x = 1\n")
    assert detect_target([str(repo / "src")]).version == Version("1.16.0")  # nothing pinned
    write(repo / "requirements.txt", "torch>=2\ntrl==0.11.4  # the old code\n")
    assert detect_target([str(repo / "src")]).version == Version("1.16.0")  # an old pin is the source
    write(repo / "pyproject.toml", '[project]\nname = "x"\ndependencies = ["trl[vllm]>=1.13,<1.15"]\n')
    choice = detect_target([str(repo / "src")])
    assert choice.version == Version("1.14.0") and "pyproject.toml" in choice.source
    write(repo / "setup.cfg", "[options]\ninstall_requires =\n    trl==1.14.3\n")
    assert detect_target([str(repo)]).version == Version("1.14.3")
    write(repo / "setup.cfg", "[metadata]\nname = x\n")
    write(repo / "setup.py", "from setuptools import setup\nsetup(install_requires=['trl>=1.15,<1.16'])\n")
    assert detect_target([str(repo)]).version == Version("1.15.0")


@pytest.mark.slow
def test_process_pool_gives_the_same_result(tmp_path):
    for i in range(30):
        write(tmp_path / f"m{i:02d}.py", OLD_SFT if i % 3 else "x = 'chunked_nll'\n")
    write(tmp_path / "broken.py", "x = 'chunked_nll'\ndef (:\n")
    serial = migrate(tmp_path, mode="check", jobs=1)
    pooled = migrate(tmp_path, mode="check", jobs=2)
    assert [(f.path, f.status, f.findings, f.errors) for f in serial.files] == [
        (f.path, f.status, f.findings, f.errors) for f in pooled.files
    ]
    assert serial.totals == pooled.totals and serial.totals["failed"] == 1


@pytest.mark.parametrize("bom, encoding", [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
                                           (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF8, "utf-8")])
def test_manifest_decoded_as_pip_reads_a_requirements_file(bom, encoding):
    """pip's `auto_decode` honours a UTF-8/16/32 byte-order mark; `decode_manifest` too, and encodes back byte for
    byte (a UTF-32-LE mark begins with UTF-16-LE's: the longer one must win)."""
    from compat.migrate.textio import decode_manifest

    data = bom + "trl==0.7.7\r\ntransformers==4.36.2\r\n".encode(encoding)
    decoded = decode_manifest(data)
    assert decoded.text == "trl==0.7.7\r\ntransformers==4.36.2\r\n" and decoded.encoding == encoding
    assert decoded.encode(decoded.text) == data


def test_utf16_requirements_file_is_migrated_and_written_back_in_utf16(tmp_path):
    """`pip freeze > requirements.txt` in Windows PowerShell 5 writes UTF-16-LE with a BOM and CRLF, and pip installs
    from it (a real PPO-era repository of the corpus, Jungliana/USD-trl, has one). Its pins are read (they chose the
    transformers target of the Python rules, which crashed on it before), raised, and written back in UTF-16."""
    from migrations.kinds.pins import requirement_spec

    repo = git_repo(tmp_path / "repo")
    text = "accelerate==0.25.0\r\ntransformers==4.36.2\r\ntrl==0.7.7\r\n"
    manifest = write(repo / "requirements.txt", codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    write(repo / "train.py", "from trl import PPOConfig\n\nconfig = PPOConfig(learning_rate=1e-5)\n")
    commit_all(repo)
    assert str(requirement_spec(str(repo), "transformers")) == "==4.36.2"
    report = migrate_paths([str(repo)], jobs=1)
    by_path = {os.path.basename(f.path): f for f in report.files}
    assert not any(f.errors for f in report.files), [(f.path, f.errors) for f in report.files]
    assert by_path["requirements.txt"].written and by_path["requirements.txt"].encoding == "utf-16-le"
    data = manifest.read_bytes()
    assert data.startswith(codecs.BOM_UTF16_LE)
    new = data[len(codecs.BOM_UTF16_LE):].decode("utf-16-le")
    assert "trl==0.7.7" not in new and "\ntrl" in new and new.count("\r\n") == 3 and "\n" not in new.replace("\r\n", "")
    assert by_path["train.py"].written
