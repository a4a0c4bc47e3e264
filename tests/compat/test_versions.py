"""The verdicts of ``check_environment`` for real-world version strings, across every TRL profile.

Each case describes a whole environment with fake dist-info folders (metadata only: no package code exists, nothing is
imported; see ``_fakes``) and asserts the exact set of non-OK findings, the profile chosen and, for errors, the fix.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.environment import ABSENT, ERROR, OK, WARNING, check_environment, contains, fast_contains
from tests.compat._fakes import fake_env

CORE_OLD = {"transformers": "4.56.2", "accelerate": "1.4.0", "datasets": "4.7.0"}
HTTP = {"requests": "2.32.5", "urllib3": "2.5.0"}
STACKS = {
    "1.13": {"trl": "1.13.0", **CORE_OLD, **HTTP},
    "1.14": {"trl": "1.14.0", **CORE_OLD, **HTTP},
    "1.15": {"trl": "1.15.0", **CORE_OLD},
    "1.16": {"trl": "1.16.0", **CORE_OLD, "accelerate": "1.10.1"},
    "none": {},
}

# (id, base stack, overrides (None = not installed), python, expected profile, expected non-OK findings)
CASES = [
    ("floor-1.13-exact", "1.13", {}, "3.11.7", "1.13", []),
    ("floor-1.14-exact", "1.14", {}, "3.11.7", "1.14", []),
    ("floor-1.15-exact", "1.15", {}, "3.11.7", "1.15", []),
    ("floor-1.16-exact", "1.16", {}, "3.11.7", "1.16", []),
    ("peft-0.12.0-too-old", "1.13", {"peft": "0.12.0"}, "3.11.7", "1.13", [("peft", ERROR)]),
    ("peft-0.13.0-floor", "1.13", {"peft": "0.13.0"}, "3.11.7", "1.13", []),
    ("peft-local-build", "1.16", {"peft": "0.13.0+internal.3"}, "3.11.7", "1.16", []),
    ("deepspeed-0.18.5-too-old", "1.14", {"deepspeed": "0.18.5"}, "3.11.7", "1.14", [("deepspeed", ERROR)]),
    ("deepspeed-0.18.6-floor", "1.15", {"deepspeed": "0.18.6"}, "3.11.7", "1.15", []),
    ("deepspeed-dev-of-floor", "1.13", {"deepspeed": "0.18.6.dev0"}, "3.11.7", "1.13", [("deepspeed", WARNING)]),
    ("deepspeed-rc-of-floor", "1.13", {"deepspeed": "0.18.6rc1"}, "3.11.7", "1.13", [("deepspeed", WARNING)]),
    ("deepspeed-dev-below-floor", "1.13", {"deepspeed": "0.18.5.dev0"}, "3.11.7", "1.13", [("deepspeed", ERROR)]),
    ("deepspeed-dev-above-floor", "1.16", {"deepspeed": "0.19.0.dev0"}, "3.11.7", "1.16", []),
    ("deepspeed-vendor-string", "1.16", {"deepspeed": "0.18.6-custom build"}, "3.11.7", "1.16", [("deepspeed", WARNING)]),
    ("transformers-5.1.0-with-deepspeed", "1.16", {"deepspeed": "0.19.8", "transformers": "5.1.0"}, "3.11.7", "1.16",
     [("transformers", ERROR)]),
    ("transformers-5.1.0-without-deepspeed", "1.16", {"transformers": "5.1.0"}, "3.11.7", "1.16", []),
    ("transformers-rc-above-floor", "1.16", {"transformers": "5.0.0rc0"}, "3.11.7", "1.16", []),
    ("transformers-too-old", "1.15", {"transformers": "4.55.4"}, "3.11.7", "1.15", [("transformers", ERROR)]),
    ("transformers-missing-with-trl", "1.15", {"transformers": None}, "3.11.7", "1.15", [("transformers", ERROR)]),
    ("accelerate-1.4.0-on-1.16", "1.16", {"accelerate": "1.4.0"}, "3.11.7", "1.16", [("accelerate", ERROR)]),
    ("accelerate-1.4.0-on-1.15", "1.15", {"accelerate": "1.4.0"}, "3.11.7", "1.15", []),
    ("vllm-0.19.0-below-window", "1.13", {"vllm": "0.19.0"}, "3.11.7", "1.13", [("vllm", ERROR)]),
    ("vllm-0.28.0-top-of-window", "1.13", {"vllm": "0.28.0"}, "3.11.7", "1.13", []),
    ("vllm-0.28.0+cu129-local", "1.13", {"vllm": "0.28.0+cu129"}, "3.11.7", "1.13", []),
    ("vllm-0.29.0-above-window", "1.13", {"vllm": "0.29.0"}, "3.11.7", "1.13", [("vllm", WARNING)]),
    ("vllm-0.29.0-inside-1.14", "1.14", {"vllm": "0.29.0"}, "3.11.7", "1.14", []),
    ("vllm-0.33.0-above-window", "1.16", {"vllm": "0.33.0"}, "3.11.7", "1.16", [("vllm", WARNING)]),
    ("vllm-dev-above-window", "1.13", {"vllm": "0.28.1.dev5+g1234"}, "3.11.7", "1.13", [("vllm", WARNING)]),
    ("vllm-rc-of-window-floor", "1.13", {"vllm": "0.19.1rc1"}, "3.11.7", "1.13", [("vllm", WARNING)]),
    ("vllm-N/A", "1.13", {"vllm": "N/A"}, "3.11.7", "1.13", [("vllm", WARNING)]),
    ("liger-0.8.1-too-old", "1.16", {"liger-kernel": "0.8.1"}, "3.11.7", "1.16", [("liger-kernel", ERROR)]),
    ("liger-0.8.2-floor", "1.16", {"liger-kernel": "0.8.2"}, "3.11.7", "1.16", []),
    ("trl-1.13-without-requests", "1.13", {"requests": None}, "3.11.7", "1.13", [("requests", ERROR)]),
    ("trl-1.14.1-without-http", "1.14", {"trl": "1.14.1", "requests": None, "urllib3": None}, "3.11.7", "1.14",
     [("requests", ERROR), ("urllib3", ERROR)]),
    ("trl-1.14.2-without-http", "1.14", {"trl": "1.14.2", "requests": None, "urllib3": None}, "3.11.7", "1.14", []),
    ("trl-1.12.0-ppo-era", "1.13", {"trl": "1.12.0"}, "3.11.7", "1.13", [("trl", ERROR)]),
    ("trl-1.9.0-ppo-era", "1.13", {"trl": "1.9.0"}, "3.11.7", "1.13", [("trl", ERROR)]),
    ("trl-1.12.0-ppo-era-without-http", "1.13", {"trl": "1.12.0", "requests": None, "urllib3": None}, "3.11.7", "1.13",
     [("trl", ERROR)]),
    ("trl-rc-of-1.13", "1.13", {"trl": "1.13.0rc1"}, "3.11.7", "1.13", [("trl", WARNING)]),
    ("trl-1.17-newer-than-table", "1.16", {"trl": "1.17.0"}, "3.11.7", "1.16", [("trl", WARNING)]),
    ("trl-unparseable", "1.16", {"trl": "main"}, "3.11.7", "1.16", [("trl", WARNING)]),
    ("python-3.10-on-1.15", "1.15", {}, "3.10.12", "1.15", [("python", ERROR)]),
    ("python-3.10-on-1.13", "1.13", {}, "3.10.12", "1.13", []),
    ("no-trl-empty-env", "none", {}, "3.11.7", "1.16", []),
    ("no-trl-old-peft", "none", {"peft": "0.12.0"}, "3.11.7", "1.16", [("peft", ERROR)]),
    ("no-trl-old-transformers", "none", {"transformers": "4.40.0"}, "3.11.7", "1.16", [("transformers", ERROR)]),
]


@pytest.mark.parametrize(
    ("stack", "overrides", "python", "profile", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_verdict(tmp_path: Path, stack: str, overrides: dict, python: str, profile: str, expected: list) -> None:
    versions = {**STACKS[stack], **overrides}
    report = check_environment(path=[fake_env(tmp_path / "env", versions)], python_version=python)
    assert report.profile == profile
    assert [(f.package, f.status) for f in report.findings if f.status not in (OK, ABSENT)] == expected
    assert report.ok == (ERROR not in {status for _, status in expected})
    assert (report.fix_command is None) == all(pkg == "python" or status != ERROR for pkg, status in expected)


def test_at_least_25_cases_across_all_profiles() -> None:
    assert len(CASES) >= 25
    assert {case[4] for case in CASES} == {"1.13", "1.14", "1.15", "1.16"}


def test_optional_absent_and_required_absent(tmp_path: Path) -> None:
    report = check_environment(path=[fake_env(tmp_path, {"trl": "1.16.0", "accelerate": "1.15.0"})])
    status = {f.package: f.status for f in report.findings}
    assert status["peft"] == ABSENT and status["vllm"] == ABSENT and status["liger-kernel"] == ABSENT
    assert status["transformers"] == ERROR and status["datasets"] == ERROR
    assert "transformers" not in [f.package for f in report.findings if f.status == ABSENT]


def test_no_trl_notes_and_everything_optional(tmp_path: Path) -> None:
    report = check_environment(path=[fake_env(tmp_path, {})])
    assert report.trl_version is None and report.ok
    assert {f.status for f in report.findings if f.package != "python"} == {ABSENT}
    assert "no TRL installed" in report.notes[0]


def test_ppo_era_names_migrate(tmp_path: Path) -> None:
    report = check_environment(path=[fake_env(tmp_path, {**STACKS["1.13"], "trl": "1.12.0"})])
    (trl,) = [f for f in report.findings if f.package == "trl"]
    assert trl.status == ERROR and "PPO" in trl.why and "python -m compat.migrate" in trl.why
    assert "python -m compat.migrate" in report.notes[0]
    assert '"trl>=1.13.0"' in report.fix_command


def test_fix_command_merges_all_specifiers_of_a_package(tmp_path: Path) -> None:
    versions = {**STACKS["1.16"], "transformers": "4.50.0", "deepspeed": "0.19.8", "vllm": "0.19.0", "torch": "2.13.0+cpu"}
    report = check_environment(path=[fake_env(tmp_path, versions)])
    assert report.fix_command == 'pip install "transformers>=4.56.2,!=5.1.0" "vllm>=0.22.0,<=0.31.0"'
    # torch is kept pinned unless vLLM (which pins its own torch) has to move
    versions["vllm"] = None
    report = check_environment(path=[fake_env(tmp_path / "b", versions)])
    assert report.fix_command == 'pip install "transformers>=4.56.2,!=5.1.0" "torch==2.13.0"'


def test_requirement_without_specifier_is_named_alone(tmp_path: Path) -> None:
    report = check_environment(path=[fake_env(tmp_path, {**STACKS["1.13"], "requests": None, "urllib3": None})])
    assert report.fix_command == 'pip install "requests" "urllib3"'


def test_shadowed_distribution_first_on_path_wins(tmp_path: Path) -> None:
    first = fake_env(tmp_path / "first", {**STACKS["1.16"], "peft": "0.12.0"})
    second = fake_env(tmp_path / "second", {"peft": "0.21.2", "trl": "1.13.0"})
    report = check_environment(path=[first, second])
    assert report.trl_version == "1.16.0"
    assert [(f.package, f.installed, f.status) for f in report.errors] == [("peft", "0.12.0", ERROR)]


# --- the fast path is exactly packaging's SpecifierSet.contains(prereleases=True) on the inputs it accepts ---------
VERSIONS = ["0", "0.13", "0.13.0", "0.13.0.0", "0.12.9", "0.13.1", "1.4.0", "1.10.1", "1.10.0", "2.13.0+cpu",
            "0.28.0+cu129", "0.28.0", "0.28.1", "0.31.0", "0.19.1", "5.1.0", "5.1", "5.1.0+local.7", "10.0.0",
            "0.18.6.dev0", "0.19.0rc1", "1.0.post1", "1!0.1", "N/A", "0.28.0-custom"]
SPECS = ["", ">=0.13.0", ">=0.13", "<=0.28.0", "<0.28", ">0.28.0", "==0.28.0", "==5.1", "!=5.1.0",
         ">=0.19.1,<=0.28.0", ">=1.10.1", "~=1.4", "==2.13.*", ">=4.56.2,!=5.1.0"]


@pytest.mark.parametrize("spec", SPECS)
def test_fast_path_agrees_with_packaging(spec: str) -> None:
    for version in VERSIONS:
        fast = fast_contains(spec, version)
        try:
            parsed = Version(version)
        except ValueError:
            assert fast is None, version
            continue
        reference = SpecifierSet(spec).contains(parsed, prereleases=True)
        if fast is not None:
            assert fast == reference, (spec, version)
        assert contains(spec, version) == reference, (spec, version)


def test_fast_path_covers_plain_inputs() -> None:
    plain = [v for v in VERSIONS if v.replace(".", "").split("+")[0].isdigit()]
    plain_specs = [s for s in SPECS if "~" not in s and "*" not in s]
    assert all(fast_contains(s, v) is not None for s, v in itertools.product(plain_specs, plain))
