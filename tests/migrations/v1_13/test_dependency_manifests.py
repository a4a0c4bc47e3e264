"""The manifest rule on real-looking files of each format: only the specifiers change, byte for byte."""

from __future__ import annotations


import pytest
from packaging.version import Version

from compat import floors
from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.v1_13.dependency_manifests import MIGRATION as RULE


def migrate(text: str, name: str, target: str = "1.16.0"):
    result = migrate_source(text, options=Options(target_trl=Version(target)), rules=[RULE], path=f"repo/{name}",
                            verify_idempotent=True)
    assert result.ok, result.errors
    return result


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) line pairs; asserts the files differ only line by line (no line added or removed)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


REQUIREMENTS = """\
# training stack
-r requirements-base.txt
--extra-index-url https://download.pytorch.org/whl/cpu
torch==2.3.1  # not ours
trl==0.11.4    # pinned for PPO
transformers>=4.40,<5 ; python_version >= "3.9"
peft~=0.10.0
accelerate
vllm==0.19.0
deepspeed>=0.14.4 \\
    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000
git+https://github.com/huggingface/datasets.git
-e ./local_pkg
numpy<2
"""


def test_requirements_txt_only_specifiers_change():
    result = migrate(REQUIREMENTS, "requirements.txt")
    assert changed_lines(REQUIREMENTS, result.text) == [
        ("trl==0.11.4    # pinned for PPO\n", "trl==1.16.0    # pinned for PPO\n"),
        ('transformers>=4.40,<5 ; python_version >= "3.9"\n', 'transformers>=4.56.2,<5 ; python_version >= "3.9"\n'),
        ("peft~=0.10.0\n", "peft>=0.13.0\n"),
        ("vllm==0.19.0\n", "vllm>=0.22.0,<=0.31.0\n"),
        ("deepspeed>=0.14.4 \\\n", "deepspeed>=0.18.6 \\\n"),
    ]
    severities = {f.message.split()[0]: f.severity for f in result.findings}
    assert severities["vllm==0.19.0"] == "warning"
    assert any(f.severity == "manual" and "hashes" in f.message for f in result.findings)
    assert all(f.line for f in result.findings)


def test_requirements_window_comes_from_compat_floors():
    for line in ("1.13", "1.14", "1.15", "1.16"):
        window = next(f.specifier for f in floors.PROFILES[line].floors if f.package == "vllm")
        result = migrate("vllm==0.19.0\naccelerate>=1.4.0\n", "requirements-gpu.txt", target=f"{line}.0")
        accelerate = "accelerate>=1.10.1" if line == "1.16" else "accelerate>=1.4.0"
        assert result.text == f"vllm{window}\n{accelerate}\n"


def test_requirements_noops_are_byte_identical():
    text = "trl>=1.16.0\r\npeft>=0.15  # ok\r\ntorch\r\nvllm\r\n-r other.txt\r\n"
    result = migrate(text, "requirements.txt")
    assert result.text == text and not result.findings


PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]

[project]
name = "my-rlhf"
dependencies = [
    "trl>=0.9,<0.12",  # PPO era
    'accelerate>=0.30',
    "torch>=2.1",
]

[project.optional-dependencies]
serve = ["vllm==0.19.0", "fastapi"]
lora = [
  "peft>=0.10.0",
]

[dependency-groups]
dev = ["pytest", "deepspeed>=0.14"]

[tool.poetry.dependencies]
python = "^3.11"
trl = "^0.11"
peft = { version = "~0.10", optional = true }
vllm = "0.19.0"

[tool.ruff]
line-length = 120  # keep me
"""


def test_pyproject_pep621_dependency_groups_and_poetry():
    result = migrate(PYPROJECT, "pyproject.toml")
    assert changed_lines(PYPROJECT, result.text) == [
        ('    "trl>=0.9,<0.12",  # PPO era\n', '    "trl>=1.16.0",  # PPO era\n'),
        ("    'accelerate>=0.30',\n", "    'accelerate>=1.10.1',\n"),
        ('serve = ["vllm==0.19.0", "fastapi"]\n', 'serve = ["vllm>=0.22.0,<=0.31.0", "fastapi"]\n'),
        ('  "peft>=0.10.0",\n', '  "peft>=0.13.0",\n'),
        ('dev = ["pytest", "deepspeed>=0.14"]\n', 'dev = ["pytest", "deepspeed>=0.18.6"]\n'),
        ('trl = "^0.11"\n', 'trl = "^1.16.0"\n'),
        ('peft = { version = "~0.10", optional = true }\n', 'peft = { version = "~0.13.0", optional = true }\n'),
        ('vllm = "0.19.0"\n', 'vllm = ">=0.22.0,<=0.31.0"\n'),
    ]
    assert any("upper bound <0.12" in f.message for f in result.findings)


SETUP_CFG = """\
[metadata]
name = my-rlhf

[options]
packages = find:
install_requires =
    trl==0.11.4
    transformers>=4.36  # comment kept
    requests

[options.extras_require]
vllm = vllm==0.19.0
lora =
    peft>=0.8

[flake8]
max-line-length = 120
"""


def test_setup_cfg():
    result = migrate(SETUP_CFG, "setup.cfg")
    assert changed_lines(SETUP_CFG, result.text) == [
        ("    trl==0.11.4\n", "    trl==1.16.0\n"),
        ("    transformers>=4.36  # comment kept\n", "    transformers>=4.56.2  # comment kept\n"),
        ("vllm = vllm==0.19.0\n", "vllm = vllm>=0.22.0,<=0.31.0\n"),
        ("    peft>=0.8\n", "    peft>=0.13.0\n"),
    ]


SETUP_PY = """\
from setuptools import find_packages, setup

REQUIRES = [
    "trl>=0.11",
    'peft',  # unpinned stays unpinned
]

setup(
    name="my-rlhf",
    packages=find_packages(),
    install_requires=REQUIRES,
    extras_require={"deepspeed": ["deepspeed==0.14.4"], "dev": ["pytest"]},
)
OTHER = ["trl==0.1"]  # not passed to setup: untouched
"""


def test_setup_py_literal_lists():
    result = migrate(SETUP_PY, "setup.py")
    assert changed_lines(SETUP_PY, result.text) == [
        ('    "trl>=0.11",\n', '    "trl>=1.16.0",\n'),
        ('    extras_require={"deepspeed": ["deepspeed==0.14.4"], "dev": ["pytest"]},\n',
         '    extras_require={"deepspeed": ["deepspeed>=0.18.6"], "dev": ["pytest"]},\n'),
    ]


ENV_YML = """\
name: rlhf
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pytorch>=2.1
  - transformers=4.40  # conda spec: not ours to touch
  - pip
  - pip:
      - trl==0.11.4
      - "vllm==0.19.0"  # quoted
      - -r requirements.txt
      - peft>=0.15
variables:
  FOO: trl==0.1
"""


def test_environment_yml_pip_section_only():
    result = migrate(ENV_YML, "environment.yml")
    assert changed_lines(ENV_YML, result.text) == [
        ("      - trl==0.11.4\n", "      - trl==1.16.0\n"),
        ('      - "vllm==0.19.0"  # quoted\n', '      - "vllm>=0.22.0,<=0.31.0"  # quoted\n'),
    ]


@pytest.mark.parametrize("target,trl,accelerate", [("1.13.0", "trl==1.13.0", "accelerate>=1.4.0"),
                                                   ("1.16.0", "trl==1.16.0", "accelerate>=1.10.1")])
def test_target_line_decides_the_floors(target, trl, accelerate):
    result = migrate("trl==0.11.4\naccelerate>=0.30\n", "requirements.txt", target=target)
    assert result.text == f"{trl}\n{accelerate}\n"


def test_not_a_manifest_name_is_not_touched():
    assert not RULE.matches("notes.txt") and RULE.matches("requirements-dev.txt") and RULE.matches("pyproject.toml")
    text = "trl==0.11.4\n"
    result = migrate_source(text, options=Options(), rules=[RULE], path="repo/notes.txt")
    assert result.text == text


def test_included_requirements_in_a_requirements_folder(tmp_path):
    """`-r requirements/base.txt`: the included file is found by its folder, walked and rewritten like the top one."""
    assert RULE.matches("repo/requirements/base.txt") and RULE.matches("requirements/dev.in")
    assert not RULE.matches("repo/docs/base.txt") and not RULE.matches("base.txt")
    from compat.migrate import migrate_paths

    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements.txt").write_text("-r requirements/base.txt\n")
    (tmp_path / "requirements" / "base.txt").write_text("# pinned stack\ntrl==0.11.4\npeft==0.12.0  # adapters\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "base.txt").write_text("trl==0.11.4\n")
    report = migrate_paths([str(tmp_path)], options=Options(), rules=[RULE], mode="write", allow_dirty=True)
    assert report.exit_code == 0
    new = (tmp_path / "requirements" / "base.txt").read_text()
    assert new.startswith("# pinned stack\ntrl==1.16.0\npeft") and new.endswith("  # adapters\n") and "0.12.0" not in new
    assert (tmp_path / "requirements.txt").read_text() == "-r requirements/base.txt\n"
    assert (tmp_path / "docs" / "base.txt").read_text() == "trl==0.11.4\n"


def test_a_transformers_4_target_writes_below_5_into_the_manifest():
    from packaging.version import Version

    from compat.migrate.engine import migrate_source
    from migrations.base import Options
    from migrations.v1_13.dependency_manifests import MIGRATION as RULE

    text = "trl==0.7.4\ntransformers==4.31.0\n"
    for major, expected in ((4, "transformers>=4.56.2,<5\n"), (5, "transformers>=4.56.2\n")):
        options = Options(target_trl=Version("1.16.0"), targets=(("transformers", Version(f"{major}.0.0")),))
        result = migrate_source(text, options=options, rules=[RULE], path="requirements.txt")
        assert result.ok and result.text.splitlines()[1] + "\n" == expected, result.text
