"""`migrations.kinds.pins`: the repository's own TRL pin, read as committed, up to the repository root."""

from __future__ import annotations

import subprocess

from migrations.kinds import pins


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_committed_pin_wins_over_the_raised_one_on_disk(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "requirements.txt").write_text("torch\ntrl==0.8.6\n")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    _git(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x")
    (repo / "requirements.txt").write_text("torch\ntrl>=1.16.0\n")  # what a migration writes
    assert pins.committed_text(repo / "requirements.txt") == "torch\ntrl==0.8.6\n"
    assert str(pins.trl_spec(str(repo / "src"))) == "==0.8.6"
    assert pins.pinned(str(repo / "src"), ["0.8.5", "0.8.6", "1.16.0"]) == ("0.8.6",)


def test_no_pin_and_the_walk_stops_at_the_repository_root(tmp_path):
    (tmp_path / "requirements.txt").write_text('"trl>=0.7, <0.9"\n')  # above the repository: not its pin
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    (repo / "setup.py").write_text("install_requires=['transformers']\n")
    assert pins.trl_spec(str(repo)) is None and pins.pinned(str(repo), ["0.8.6"]) is None
    assert str(pins.trl_spec(str(tmp_path))) == "<0.9,>=0.7"
