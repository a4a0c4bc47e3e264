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
    """Only specifiers change, and the one manual step (a pin on a hashed line) has its marker above that line."""
    result = migrate(REQUIREMENTS, "requirements.txt")
    lines = result.text.splitlines(keepends=True)
    marker = next(n for n, line in enumerate(lines) if line.startswith("# TODO(trl-compat)"))
    assert "the version changed on a hashed line" in lines[marker] and lines[marker + 1].startswith("deepspeed>=0.18.6")
    assert changed_lines(REQUIREMENTS, "".join(lines[:marker] + lines[marker + 1:])) == [
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
        result = migrate("trl>=1.16.0\nvllm==0.19.0\naccelerate>=1.4.0\n", "requirements-gpu.txt", target=f"{line}.0")
        accelerate = "accelerate>=1.10.1" if line == "1.16" else "accelerate>=1.4.0"
        assert result.text == f"trl>=1.16.0\nvllm{window}\n{accelerate}\n"


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


# -- only a manifest that requires trl is touched (issue 12: 6 of 8 negative controls were rewritten) -------------

NO_TRL = {
    # trlx / OpenRLHF-style trees: their own RL stack on transformers, accelerate and deepspeed
    "requirements.txt": "accelerate==0.22.0\ntransformers==4.32.0\ndeepspeed>=0.10.0\npeft==0.5.0\ndatasets\n",
    "pyproject.toml": (
        '[project]\nname = "x"\ndependencies = ["transformers>=4.30", "accelerate>=0.20"]\n'
        '[project.optional-dependencies]\ndev = ["pytest"]\n'
        '[tool.poetry.dependencies]\ntransformers = "^4.30"\n'),
    "setup.py": 'from setuptools import setup\nsetup(name="x", install_requires=["transformers==4.30.0", "peft>=0.4"])\n',
    "setup.cfg": "[options]\ninstall_requires =\n    transformers>=4.30\n    accelerate\n",
    "environment.yml": "dependencies:\n  - python=3.10\n  - pip:\n    - transformers==4.30.0\n    - datasets==2.14.0\n",
    # a word that only contains "trl" (the byte prefilter matches it), and a package named trlx
    "requirements-rl.txt": "trlx==0.7.0\ntransformers==4.32.0  # used by trl-like code\n",
}


@pytest.mark.parametrize("name", sorted(NO_TRL))
def test_manifest_without_trl_is_left_alone(name):
    result = migrate(NO_TRL[name], name)
    assert result.text == NO_TRL[name] and not result.findings


def test_pyproject_extra_requiring_trl_raises_the_whole_file():
    text = ('[project]\nname = "x"\ndependencies = ["transformers>=4.30"]\n'
            '[project.optional-dependencies]\nrl = ["trl==0.8.6"]\n')
    result = migrate(text, "pyproject.toml")
    assert '"transformers>=4.56.2"' in result.text and '"trl==1.16.0"' in result.text


def test_setup_py_extras_requiring_trl_count():
    text = ('from setuptools import setup\n'
            'setup(name="x", install_requires=["transformers==4.30.0"], extras_require={"rl": ["trl"]})\n')
    result = migrate(text, "setup.py")
    assert "transformers>=4.56.2" in result.text and '"trl>=1.16.0"' in result.text


def test_included_file_requiring_trl_counts(tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "base.txt").write_text("trl==0.8.6\n")
    top = tmp_path / "requirements-train.txt"
    top.write_text("-r requirements/base.txt\ntransformers==4.38.2\n")
    result = migrate_source(top.read_text(), options=Options(), rules=[RULE], path=str(top), verify_idempotent=True)
    assert result.text == "-r requirements/base.txt\ntransformers>=4.56.2\n"


def test_included_files_without_trl_do_not_count(tmp_path):
    (tmp_path / "a.txt").write_text("-r b.txt\naccelerate==0.20.0\n")
    (tmp_path / "b.txt").write_text("-r a.txt\ntransformers==4.30.0\n")  # a cycle, and no trl anywhere
    top = tmp_path / "requirements.txt"
    top.write_text("--requirement=a.txt\ntransformers==4.30.0\n")
    result = migrate_source(top.read_text(), options=Options(), rules=[RULE], path=str(top), verify_idempotent=True)
    assert result.text == top.read_text() and not result.findings


def test_vcs_trl_counts_as_requiring_trl():
    text = "git+https://github.com/huggingface/trl.git@v0.8.6#egg=trl\ntransformers==4.38.2\n"
    result = migrate(text, "requirements.txt")
    assert "transformers>=4.56.2" in result.text


# -- the stack TRL's and transformers' metadata require; forks of trl ------------------------------------------------

def test_pins_trl_and_transformers_metadata_require_are_raised():
    text = "trl==0.8.6\ntokenizers==0.15.2\nhuggingface_hub>=0.20,<0.21\nsafetensors==0.4.2\npyarrow==15.0.0\nrich\n"
    result = migrate(text, "requirements.txt")
    assert result.text == ("trl==1.16.0\ntokenizers>=0.22.0\nhuggingface_hub>=0.34.0\nsafetensors>=0.4.3\n"
                           "pyarrow>=21.0.0\nrich\n")
    why = {f.message.split()[0].rstrip(":"): f.message for f in result.findings}
    assert "trl 1.16.0 requires pyarrow>=21.0.0" in why["pyarrow==15.0.0"]
    assert "transformers 4.56.2" in why["tokenizers==0.15.2"]


def test_metadata_pins_already_fine_or_above_are_kept():
    text = "trl>=1.16\ntokenizers==0.23.1\nhuggingface_hub==1.31.0\nnumpy\n"
    result = migrate(text, "requirements.txt")
    assert result.text == text and not result.findings


def test_metadata_floors_follow_the_target_release():
    # pyarrow is no requirement of TRL 1.13 (1.16 added it), but of datasets 4.7.0, which TRL 1.13 requires: the
    # raised floor comes from there (a `pyarrow==15.0.0` left beside it had no installable set)
    result = migrate("trl\npyarrow==15.0.0\n", "requirements.txt", target="1.13.0")
    assert result.text == "trl>=1.13.0\npyarrow>=21.0.0\n"
    assert any("datasets 4.7.0 (the floor) requires pyarrow>=21.0.0" in f.message for f in result.findings)


@pytest.mark.parametrize("line", [
    "git+https://github.com/huggingface/trl.git@v0.8.6#egg=trl",
    "-e git+https://github.com/me/trl.git@abc123#egg=trl",
    "-e ./trl",
    "trl @ git+https://github.com/me/trl@fork",
    "https://example.com/wheels/trl-0.8.6-py3-none-any.whl",
])
def test_trl_fork_lines_are_marked_not_rewritten(line):
    text = f"transformers>=4.56.2\n{line}\n"
    result = migrate(text, "requirements.txt")
    lines = result.text.splitlines()
    assert lines[0] == "transformers>=4.56.2" and lines[2] == line
    assert lines[1].startswith("# TODO(trl-compat): trl is installed from a VCS/URL/local path")
    assert [f.severity for f in result.findings] == ["manual"]


def test_trl_fork_in_pyproject_is_reported():
    text = ('[project]\nname = "x"\ndependencies = ["trl @ git+https://github.com/me/trl@fork", "transformers"]\n'
            '[project.urls]\nupstream = "https://github.com/huggingface/trl"\n')
    result = migrate(text, "pyproject.toml")
    assert result.text == text
    assert [(f.line, f.severity) for f in result.findings] == [(3, "manual")]


def test_a_project_url_naming_trl_is_no_requirement():
    text = '[project]\nname = "x"\ndependencies = ["transformers==4.30.0"]\n[project.urls]\nt = "https://github.com/huggingface/trl"\n'
    assert migrate(text, "pyproject.toml").text == text


# -- trl-compat joins the manifests when the rewritten code imports compat ------------------------------------------

def _needs(text: str, name: str):
    result = migrate_source(text, options=Options(project_needs=("trl-compat",)), rules=[RULE], path=f"repo/{name}",
                            verify_idempotent=True)
    assert result.ok, result.errors
    return result


def test_trl_compat_added_after_trl_when_the_code_needs_it():
    from compat._version import __version__

    result = _needs("trl==0.8.6  # rl\npeft\n", "requirements.txt")
    assert result.text == f"trl==1.16.0  # rl\ntrl-compat>={__version__}\npeft\n"
    assert any("added trl-compat" in f.message for f in result.findings)
    toml = _needs('[project]\nname = "x"\ndependencies = ["trl>=0.8", "peft"]\n', "pyproject.toml")
    assert f'dependencies = ["trl>=1.16.0", "trl-compat>={__version__}", "peft"]' in toml.text


def test_trl_compat_not_added_twice_nor_without_trl_nor_unasked():
    text = "trl>=1.16.0\ntrl-compat\n"
    assert _needs(text, "requirements.txt").text == text
    assert _needs("-r base.txt\npeft>=0.13.0\n", "requirements.txt").text == "-r base.txt\npeft>=0.13.0\n"
    assert migrate("trl>=1.16.0\n", "requirements.txt").text == "trl>=1.16.0\n"  # no rewritten file imports compat


def test_trl_compat_joins_the_pip_list_of_an_environment_yml():
    """A conda environment.yml's `pip:` list gets the trl-compat item right after trl's, same indent and quoting;
    a conda (non-pip) `trl` is no pip requirement, and no pip list holding trl leaves the text alone."""
    from compat._version import __version__

    text = "name: rl\ndependencies:\n  - python=3.11\n  - pip:\n      - 'trl==0.7.4'\n      - wandb\n"
    result = _needs(text, "environment.yml")
    assert result.text == ("name: rl\ndependencies:\n  - python=3.11\n  - pip:\n      - 'trl==1.16.0'\n"
                           f"      - 'trl-compat>={__version__}'\n      - wandb\n")
    assert not [f for f in result.findings if f.severity == "manual"]
    last = _needs("dependencies:\n  - pip:\n    - trl", "environment.yml")
    assert last.text == f"dependencies:\n  - pip:\n    - trl>=1.16.0\n    - trl-compat>={__version__}\n"
    conda = "dependencies:\n  - trl=0.7.4\n  - pip:\n    - wandb\n"
    assert _needs(conda, "environment.yml").text == conda


def test_trl_compat_joins_a_poetry_dependency_table():
    """pykoi, sotopia-rl: `[tool.poetry.dependencies]` declares trl; trl-compat is added on the line after it (it
    was a manual step with no marker in the file), in a group's table too; a multi-line constraint list stays
    manual."""
    from compat._version import __version__

    text = ('[tool.poetry]\nname = "x"\n\n[tool.poetry.dependencies]\npython = ">=3.9"\ntrl = "0.7.4"\n'
            'peft = "0.4.0"\n\n[tool.poetry.group.dev.dependencies]\npytest = "*"\n')
    result = _needs(text, "pyproject.toml")
    lines = result.text.splitlines()
    assert lines[lines.index('trl = "==1.16.0"') + 1] == f'trl-compat = ">={__version__}"'
    assert not [f for f in result.findings if f.severity == "manual"]
    group = '[tool.poetry.group.rl.dependencies]\ntrl = {version = "0.7.4", optional = true}\n'
    assert f'\ntrl-compat = ">={__version__}"\n' in _needs(group, "pyproject.toml").text
    spread = ('[tool.poetry.dependencies]\ntrl = [\n    {version = "0.7.4", python = "<3.10"},\n'
              '    {version = "0.8.6", python = ">=3.10"},\n]\n')
    assert any(f.severity == "manual" and "add trl-compat" in f.message for f in _needs(spread, "pyproject.toml").findings)


def test_trl_compat_joins_the_setup_py_lists():
    """reward-bench's setup.py: `"trl>=0.8.2",  # comment` on its own line of `install_requires`; trl-compat was a
    manual step with no marker in the file. It is now an element of its own after trl's (same indent and quotes,
    the comment stays with trl), or `, "trl-compat..."` after it in a one-line list."""
    from compat._version import __version__

    text = ('from setuptools import setup\nsetup(\n    install_requires=[\n        "torch",\n'
            '        "trl>=0.8.2",  # fixed an import error\n    ],\n)\n')
    result = _needs(text, "setup.py")
    assert result.text.splitlines()[4:7] == ['        "trl>=1.16.0",  # fixed an import error',
                                             f'        "trl-compat>={__version__}",', "    ],"]
    assert not [f for f in result.findings if f.severity == "manual"]
    last = _needs("from setuptools import setup\nsetup(install_requires=[\n    'peft',\n    'trl'\n])\n", "setup.py")
    assert last.text.splitlines()[2:5] == ["    'peft',", "    'trl>=1.16.0',", f"    'trl-compat>={__version__}'"]
    inline = _needs('from setuptools import setup\nsetup(name="x", install_requires=["trl>=1.16.0", "peft"])\n',
                    "setup.py")
    assert f'install_requires=["trl>=1.16.0", "trl-compat>={__version__}", "peft"]' in inline.text
    named = _needs('from setuptools import setup\nREQS = ["trl==0.7.4"]\nsetup(install_requires=REQS)\n', "setup.py")
    assert f'REQS = ["trl==1.16.0", "trl-compat>={__version__}"]' in named.text


def test_trl_compat_joins_a_setup_cfg_value():
    from compat._version import __version__

    text = "[metadata]\nname = x\n[options]\ninstall_requires =\n  torch\n  trl==0.7.4\n  peft\n"
    assert _needs(text, "setup.cfg").text == ("[metadata]\nname = x\n[options]\ninstall_requires =\n  torch\n"
                                              f"  trl==1.16.0\n  trl-compat>={__version__}\n  peft\n")
    one = _needs("[options]\ninstall_requires = trl>=1.16.0\n", "setup.cfg")
    assert one.text == f"[options]\ninstall_requires = trl>=1.16.0\n    trl-compat>={__version__}\n"


def test_trl_compat_that_cannot_be_written_is_marked_above_trl():
    """Where the layout takes no new requirement by hand (a Poetry constraint list, a `;`-joined setup.cfg line),
    the manual step has its marker above the trl line, so the report and the tree hold the same steps; a second
    run adds no second marker."""
    spread = ('[tool.poetry.dependencies]\ntrl = [\n    {version = "0.7.4", python = "<3.10"},\n'
              '    {version = "0.8.6", python = ">=3.10"},\n]\n')
    result = _needs(spread, "pyproject.toml")
    lines = result.text.splitlines()
    assert lines[1].startswith("# TODO(trl-compat): add trl-compat>=") and lines[2] == "trl = ["
    assert [f.line for f in result.findings if f.severity == "manual"] == [2]
    again = _needs(result.text, "pyproject.toml")
    assert again.text == result.text
    joined = _needs("[options]\ninstall_requires = trl>=1.16.0; numpy\n", "setup.cfg")
    assert joined.text.splitlines()[1].startswith("# TODO(trl-compat): add trl-compat>=")


def test_the_runner_tells_the_manifests_what_the_code_now_needs(tmp_path):
    """End to end: a script whose migration imports `compat` makes the same run add trl-compat to the manifest."""
    from compat._version import __version__
    from compat.migrate import migrate_paths
    from migrations import get

    (tmp_path / "train.py").write_text("from trl.losses import FusedLinearDPOLoss\n")
    (tmp_path / "requirements.txt").write_text("trl==1.13.0\n")
    report = migrate_paths([str(tmp_path)], options=Options(), allow_dirty=True, mode="write",
                           rules=[get("trl-losses-to-compat"), RULE])
    assert "from compat.losses import" in (tmp_path / "train.py").read_text()
    assert (tmp_path / "requirements.txt").read_text() == f"trl==1.16.0\ntrl-compat>={__version__}\n"
    assert [e.needs for e in report.files if e.path.endswith("train.py")] == [["trl-compat"]]
    # a second run: nothing left to do
    again = migrate_paths([str(tmp_path)], options=Options(), allow_dirty=True, mode="check",
                          rules=[get("trl-losses-to-compat"), RULE])
    assert all(e.status == "unchanged" for e in again.files)


def test_the_diffusion_trainers_bring_diffusers_into_a_manifest_that_lacks_it(tmp_path):
    """A DDPO script moved to `compat.trl` (the reference is built on diffusers, `compat._exports.NEEDS`): the
    manifest gains trl-compat, diffusers and the peft diffusers imports beside; one that declares them already keeps
    a pin that satisfies the need and has one below it raised (else the set would not install)."""
    from compat._exports import NEEDS
    from compat._version import __version__
    from compat.migrate import migrate_paths
    from migrations import get

    rules = [get("removed-ddpo-alignprop-iterative-sft"), RULE]
    diffusers, peft = NEEDS["DDPOTrainer"]
    assert diffusers.startswith("diffusers>=") and peft.startswith("peft>=")
    (tmp_path / "ddpo.py").write_text("from trl import DDPOConfig, DDPOTrainer\n")
    (tmp_path / "requirements.txt").write_text("trl==0.11.4\n")
    report = migrate_paths([str(tmp_path)], options=Options(), allow_dirty=True, mode="write", rules=rules)
    assert (tmp_path / "requirements.txt").read_text() == f"trl==1.16.0\ntrl-compat>={__version__}\n{peft}\n{diffusers}\n"
    assert [e.needs for e in report.files if e.path.endswith("ddpo.py")] == [["trl-compat", diffusers, peft]]
    from compat.migrate.engine import needs_of

    assert needs_of("import trl\n", "import compat.trl\ncompat.trl.DDPOTrainer(c, r, p, s)\n") == [
        "trl-compat", diffusers, peft]
    assert needs_of("from compat.trl import DDPOTrainer\n", "from compat.trl import DDPOTrainer, SFTTrainer\n") == []
    kept = "trl==1.16.0\ndiffusers==0.42.1\npeft==0.17.1\n"
    result = migrate_source(kept, options=Options(project_needs=(diffusers, peft)), rules=[RULE],
                            path="repo/requirements.txt", verify_idempotent=True)
    assert result.text == kept
    low = "trl==0.11.4\ndiffusers==0.30.0\npeft==0.12.0\n"
    result = migrate_source(low, options=Options(project_needs=(diffusers, peft)), rules=[RULE],
                            path="repo/requirements.txt", verify_idempotent=True)
    assert result.text == f"trl==1.16.0\n{diffusers}\n{peft}\n"
    assert [f.message for f in result.findings if f.message.startswith("peft")] == [
        f"peft==0.12.0 is outside the supported range; rewritten to {peft[4:]} (the migrated code uses compat.trl "
        f"names that need {peft})"]


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


def test_a_notebook_install_line_is_raised_like_a_requirements_file():
    """CakeCrusher/gaitor-function-calling's notebooks install `trl==0.4.7 transformers==4.34.0 peft==0.4.0` in a
    `!pip install` cell: the same floors as requirements.txt, quotes where `>` would be the shell's redirection,
    `trl-compat` beside `trl` when asked; options, their values, paths and VCS URLs are left alone."""
    from migrations.base import Options
    from migrations.v1_13.dependency_manifests import floor_table, pip_install_line

    table = floor_table(Options(target_trl=Version("1.16.0")))
    line, messages, trl = pip_install_line('!pip install -q "trl==0.4.7" transformers==4.34.0 peft datasets\n',
                                           table, "trl-compat>=0.1.0")
    assert line == '!pip install -q "trl==1.16.0" "trl-compat>=0.1.0" "transformers>=4.56.2" peft datasets\n'
    assert trl and len(messages) == 3 and messages[-1].startswith("added trl-compat>=0.1.0")
    assert pip_install_line("%pip install -U trl\n", table)[0] == '%pip install -U "trl>=1.16.0"\n'
    assert pip_install_line("pip install trl trl-compat\n", table, "trl-compat>=0.1.0")[0] == \
        'pip install "trl>=1.16.0" trl-compat\n'
    for kept in ("!pip install -r requirements.txt\n", "!pip install git+https://github.com/huggingface/trl.git\n",
                 "!pip install -e . --extra-index-url https://x/simple\n", "!ls trl==0.4.7\n", "print(1)\n"):
        assert pip_install_line(kept, table)[0] == kept, kept
    # a command over backslash continuations (dieai/generative-ai-on-aws's `%pip install -q \` cells)
    line, _messages, trl = pip_install_line("%pip install -q \\\n    trl==0.7.2 \\\n    transformers==4.34.1\n", table)
    assert trl and line == '%pip install -q \\\n    trl==1.16.0 \\\n    "transformers>=4.56.2"\n'
    # trl from a VCS URL (SepKeyPro/genAI's notebooks): kept as written, trl-compat beside it when the code needs it
    line, _messages, trl = pip_install_line("!pip install git+https://github.com/huggingface/trl.git peft\n", table,
                                            "trl-compat>=0.1.0")
    assert trl and line == '!pip install git+https://github.com/huggingface/trl.git "trl-compat>=0.1.0" peft\n'
    # a shell comment after the command is words, not requirements (Oddadmix/training-notebooks' ORPO notebook)
    line, _messages, trl = pip_install_line("! pip install git+https://github.com/huggingface/trl.git  # install TRL "
                                            "from the main branch\n", table, "trl-compat>=0.1.0")
    assert trl and line == ('! pip install git+https://github.com/huggingface/trl.git "trl-compat>=0.1.0"  # install '
                            'TRL from the main branch\n')
    assert pip_install_line("!pip install trl==0.8.6 # pinned trl\n", table)[0] == '!pip install trl==1.16.0 # pinned trl\n'


def test_trl_compat_goes_to_the_manifests_of_the_code_that_needs_it(tmp_path):
    """mesolitica/malaya: one repository, a requirements file per project folder; `trl-compat` went to every one once
    any code of the run imported `compat`. Now a manifest gets it when code under its folder needs it, or, where no
    migrated code lives under its folder (`requirements/train.txt`), when any code of the run does."""
    from compat.migrate import migrate_paths
    from migrations import get

    for folder, code in (("uses", "from trl.trainer.utils import truncate_right\nt = truncate_right\n"),
                         ("plain", "from trl import SFTTrainer\nt = SFTTrainer(model='m')\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text(code)
        (tmp_path / folder / "requirements.txt").write_text("trl==0.8.6\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "train.txt").write_text("trl==0.8.6\n")
    report = migrate_paths([str(tmp_path)], options=Options(), rules=[RULE, get("removed-trainer-utils")], mode="write",
                           allow_dirty=True, jobs=1)
    assert not [f for f in report.files if f.status == "failed"], report.files
    assert "from compat.trl import truncate_right" in (tmp_path / "uses" / "train.py").read_text()
    assert "trl-compat>=" in (tmp_path / "uses" / "requirements.txt").read_text()
    assert "trl-compat" not in (tmp_path / "plain" / "requirements.txt").read_text()
    assert "trl-compat>=" in (tmp_path / "requirements" / "train.txt").read_text()


def test_the_projects_python_range_is_raised_to_the_targets_requires_python():
    """DanielSc4/RewardLM's Poetry `python = "^3.9"` beside `trl = "^1.16.0"`: TRL 1.16 declares Requires-Python
    >=3.11 and a resolver solves for the project's whole range, so the file would not lock; PEP 621's
    `requires-python` likewise. The rest of a constraint (an upper bound) stays."""
    poetry = '[tool.poetry.dependencies]\npython = "^3.9"\ntrl = "^0.4.1"\n'
    result = migrate(poetry, "pyproject.toml")
    assert changed_lines(poetry, result.text) == [('python = "^3.9"\n', 'python = "^3.11"\n'),
                                                  ('trl = "^0.4.1"\n', 'trl = "^1.16.0"\n')]
    pep621 = '[project]\nname = "x"\nrequires-python = ">=3.8,<3.13"\ndependencies = ["trl==0.11.4"]\n'
    result = migrate(pep621, "pyproject.toml")
    assert ('requires-python = ">=3.8,<3.13"\n', 'requires-python = ">=3.11,<3.13"\n') in changed_lines(pep621,
                                                                                                           result.text)
    assert any(f.message.startswith("python>=3.8 raised to >=3.11") for f in result.findings), result.findings
    # TRL 1.13 declares >=3.10; a range that already admits it stays
    result = migrate(pep621.replace(">=3.8", ">=3.10"), "pyproject.toml", target="1.13.0")
    assert "requires-python = \">=3.10,<3.13\"" in result.text
    python = next(r for r in floors.PROFILES["1.16"].floors if r.package == floors.PYTHON)
    assert python.specifier == ">=3.11"


def test_a_python_version_file_below_the_raised_range_is_reported(tmp_path):
    """gustavecortal/eliciting_emotional_reasoning: `.python-version` says 3.10 beside a `requires-python` raised to
    >=3.11 (uv picks the interpreter from it and refuses the project): a warning, the file is not edited."""
    pep621 = '[project]\nname = "x"\nrequires-python = ">=3.10"\ndependencies = ["trl==0.23.1"]\n'
    (tmp_path / ".python-version").write_text("3.10\n")
    result = migrate_source(pep621, options=Options(target_trl=Version("1.16.0")), rules=[RULE],
                            path=str(tmp_path / "pyproject.toml"), verify_idempotent=True)
    [warning] = [f for f in result.findings if ".python-version" in f.message]
    assert warning.severity == "warning" and "pins Python 3.10, below what TRL 1.16.0 requires (>=3.11)" in \
        warning.message
    (tmp_path / ".python-version").write_text("3.11.9\n")
    result = migrate_source(pep621, options=Options(target_trl=Version("1.16.0")), rules=[RULE],
                            path=str(tmp_path / "pyproject.toml"), verify_idempotent=True)
    assert not [f for f in result.findings if ".python-version" in f.message]


def test_a_torch_pin_below_transformers_runtime_floor_is_reported():
    """zucchini-nlp/RLHF-GPT2 `torch==2.1.0`, umass-ml4ed `torch==2.0.1` beside a raised, open transformers: pip
    installs transformers 5.24, which runs without PyTorch below 2.6 (4.56.2: below 2.1). torch stays as written (its
    CUDA build and torchvision / torchaudio go with it), with a warning."""
    text = "trl==0.7.4\ntorch==2.1.0\ntransformers==4.36.0\n"
    result = migrate(text, "requirements.txt")
    warnings = [f for f in result.findings if f.severity == "warning" and f.message.startswith("torch==2.1.0")]
    assert len(warnings) == 1 and warnings[0].line == 2 and "below 2.6.0" in warnings[0].message
    assert "torch==2.1.0\n" in result.text
    for fine in ("trl\ntorch>=2.0\n", "trl\ntorch==2.7.1+cu126\n", "trl\ntorch\n"):
        assert not [f for f in migrate(fine, "requirements.txt").findings if f.message.startswith("torch")]
    poetry = '[tool.poetry.dependencies]\npython = "^3.11"\ntrl = "^0.4.1"\ntorch = "{}"\n'
    assert not [f for f in migrate(poetry.format("^2.0.1"), "pyproject.toml").findings if "torch" in f.message]
    assert [f.line for f in migrate(poetry.format("2.1.0"), "pyproject.toml").findings if "PyTorch" in f.message] == [4]


def test_the_torch_runtime_floors_are_transformers_own():
    import inspect
    import re
    import zipfile
    from pathlib import Path

    from migrations.kinds.requirements import TORCH_RUNTIME_FLOOR

    wheel = Path(__file__).resolve().parents[3] / ".cache" / "wheels" / "transformers-4.56.2-py3-none-any.whl"
    if not wheel.exists():
        pytest.skip("the transformers 4.56.2 wheel is not cached (make .cache/wheels/.downloaded)")
    old = zipfile.ZipFile(wheel).read("transformers/utils/import_utils.py").decode()
    assert f'Disabling PyTorch because PyTorch >= {TORCH_RUNTIME_FLOOR["4.56.2"][:3]} is required' in old
    transformers = pytest.importorskip("transformers")
    if transformers.__version__ != "5.24.0":
        pytest.skip(f"transformers {transformers.__version__} installed, the table's newest is 5.24.0")
    from transformers.utils import import_utils

    floors = re.findall(r"Disabling PyTorch because PyTorch >= ([0-9.]+) is required", inspect.getsource(import_utils))
    assert floors == [TORCH_RUNTIME_FLOOR["5.24.0"][:3]]


def test_a_lock_file_beside_a_rewritten_manifest_is_reported(tmp_path):
    """ab-10/vequinox: pyproject.toml raised to trl>=1.16.0 beside a uv.lock at trl 0.25.1 (`uv sync --locked`
    refuses): a warning says to re-lock; the lock file is not touched."""
    (tmp_path / "uv.lock").write_text("version = 1\n")
    text = '[project]\nname = "x"\nrequires-python = ">=3.11"\ndependencies = ["trl>=0.25"]\n'
    result = migrate_source(text, options=Options(target_trl=Version("1.16.0")), rules=[RULE],
                            path=str(tmp_path / "pyproject.toml"), verify_idempotent=True)
    assert result.ok and "trl>=1.16.0" in result.text
    assert [f.message for f in result.findings if f.severity == "warning"] == [
        "uv.lock still pins the stack this manifest had: re-lock (uv lock) after the migration"]
    assert (tmp_path / "uv.lock").read_text() == "version = 1\n"


def test_a_bitsandbytes_pin_below_transformers_5s_floor_is_raised():
    """medicalgpt `bitsandbytes==0.43.3`, malaya `==0.41.1` beside a raised, open transformers: transformers 5 refuses
    bitsandbytes below 0.46.1 when it loads a quantized model (the load-in-kbit rewrites included). Raised like a
    metadata floor; a file capping transformers below 5 keeps its pin (4.56.2 has no such floor)."""
    result = migrate("trl==0.7.4\nbitsandbytes==0.43.3\n", "requirements.txt")
    assert result.text == "trl==1.16.0\nbitsandbytes>=0.46.1\n"
    from migrations.kinds.requirements import BITSANDBYTES_RUNTIME_FLOOR, PackageFloor, runtime_floors

    from packaging.specifiers import SpecifierSet

    capped = PackageFloor("transformers", SpecifierSet(">=4.56.2,<5"), Version("4.56.2"), "", upper="<5")
    assert runtime_floors(capped) == {}
    transformers = pytest.importorskip("transformers")
    if transformers.__version__ == "5.24.0":
        from transformers.utils import import_utils

        assert import_utils.BITSANDBYTES_MIN_VERSION == BITSANDBYTES_RUNTIME_FLOOR["5.24.0"]
