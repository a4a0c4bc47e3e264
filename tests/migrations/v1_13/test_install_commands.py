"""install-commands: pip commands of shell scripts and Dockerfiles that install trl, raised like the manifests.

The Dockerfile is the shape of adityabhalla-code/genai-cv-image-caption-scicap-data's SageMaker training image; the
floors come from `compat.floors` through the manifests' own table, never from a list in the test.
"""

from __future__ import annotations

import shlex

from packaging.requirements import Requirement
from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.v1_13.dependency_manifests import floor_table
from migrations.v1_13.install_commands import MIGRATION as RULE
from migrations.v1_13.install_commands import pip_commands

DOCKERFILE = """\
FROM python:3.8-slim
RUN pip install --upgrade 'transformers>=4.39.0'
RUN pip install accelerate==0.32.1 \\
    && pip install peft==0.11.1 bitsandbytes==0.43.1 \\
    && pip install trl==0.8.3
# RUN pip install trl==0.4.7
RUN echo "pip install trl==0.4.7" && pip install -r requirements.txt
"""


def migrate(text: str, name: str, needs: tuple[str, ...] = ()):
    options = Options(target_trl=Version("1.16.0"), targets=(("transformers", Version("5.24.0")),),
                      project_needs=needs)
    result = migrate_source(text, options=options, rules=[RULE], path=f"/project/{name}", verify_idempotent=True)
    assert result.ok, result.errors
    return result


def _installed(text: str) -> dict[str, str]:
    """Requirement name -> specifier, over the words of every pip command of `text` (read back with shlex)."""
    out = {}
    for m in pip_commands(text):
        for word in shlex.split(m.group("rest").replace("\\\n", " ")):
            if not word.startswith("-") and "/" not in word and not word.endswith(".txt"):
                req = Requirement(word)
                out[req.name] = str(req.specifier)
    return out


def test_the_dockerfile_installs_what_the_manifests_would():
    result = migrate(DOCKERFILE, "Dockerfile_train", needs=("trl-compat",))
    installed = _installed(result.text)
    table = floor_table(Options(target_trl=Version("1.16.0"), targets=(("transformers", Version("5.24.0")),)))
    for name in ("transformers", "accelerate", "peft", "bitsandbytes"):
        assert table[name].lowest in Requirement(f"{name}{installed[name]}").specifier, name
        assert Version("0.0.1") not in Requirement(f"{name}{installed[name]}").specifier
    assert installed["trl"] == "==1.16.0" and installed["trl-compat"].startswith(">=")
    lines = result.text.splitlines()
    assert lines[5] == "# RUN pip install trl==0.4.7"  # a comment
    assert lines[6] == 'RUN echo "pip install trl==0.4.7" && pip install -r requirements.txt'  # a string
    assert lines[4] == '    && pip install trl==1.16.0 "trl-compat>=' + installed["trl-compat"][2:] + '"'
    warning = [f for f in result.findings if f.severity == "warning"]
    assert len(warning) == 1 and warning[0].line == 1 and "Python 3.8 is below what TRL 1.16.0 requires" in \
        warning[0].message


def test_shell_scripts_uv_and_python_m_pip():
    text = ("#!/bin/bash\nset -e\nif [ ! -d env ]; then pip3 install trl==0.7.4 transformers==4.36.2; fi\n"
            "uv pip install 'peft==0.6.0'\npython -m pip install datasets==2.14.0 | tee log\n")
    result = migrate(text, "setup.sh")
    installed = _installed(result.text)
    assert installed["trl"] == "==1.16.0" and installed["transformers"].startswith(">=")
    assert installed["peft"].startswith(">=") and installed["datasets"].startswith(">=")
    assert result.text.splitlines()[2].endswith("; fi")


def test_a_vcs_install_of_trl_is_reported_and_kept():
    text = 'RUN python -m pip install "git+https://github.com/huggingface/trl.git@v0.7.4" transformers==4.36.2\n'
    result = migrate(text, "Dockerfile")
    assert "git+https://github.com/huggingface/trl.git@v0.7.4" in result.text
    assert "transformers==4.36.2" not in result.text
    assert [f.severity for f in result.findings if not f.changed] == ["manual"]
    lines = result.text.splitlines()
    assert lines[0].startswith("# TODO(trl-compat): trl is installed from a VCS/URL/local path") and \
        lines[0].endswith("[install-commands]") and lines[1].startswith("RUN python -m pip install")
    continued = "RUN pip install -q \\\n    git+https://github.com/huggingface/trl.git@v0.7.4 \\\n    peft==0.6.0\n"
    lines = migrate(continued, "Dockerfile").text.splitlines()
    assert lines[0].startswith("# TODO(trl-compat): trl is installed") and lines[1] == "RUN pip install -q \\"


def test_files_that_do_not_install_trl_are_left_alone():
    for text, name in (("pip install transformers==4.30.0 peft==0.4.0\n", "install.sh"),
                       ("# pip install trl==0.7.4\npip install transformers==4.30.0\n", "install.sh"),
                       ('echo "pip install trl==0.7.4"\npip install transformers==4.30.0\n', "run.sh"),
                       ("FROM python:3.8\nRUN pip install trlx==0.7.0 transformers==4.30.0\n", "Dockerfile")):
        result = migrate(text, name)
        assert result.text == text and not result.findings, text


def test_trl_compat_is_added_once():
    text = "pip install trl==0.7.4\npip install trl==0.7.4 peft\n"
    result = migrate(text, "run.sh", needs=("trl-compat",))
    assert result.text.count("trl-compat") == 1
    again = migrate(result.text, "run.sh", needs=("trl-compat",))
    assert again.text == result.text


def test_an_image_tag_naming_its_python_is_read():
    text = ("FROM 763104351884.dkr.ecr.eu-north-1.amazonaws.com/huggingface-pytorch-training:2.1-transformers4.36-gpu-"
            "py310-cu121-ubuntu20.04\nRUN pip install trl==0.8.3\n")
    [warning] = [f for f in migrate(text, "Dockerfile_train").findings if f.severity == "warning"]
    assert "Python 3.10 is below what TRL 1.16.0 requires" in warning.message
    assert not [f for f in migrate(text.replace("py310", "py311"), "Dockerfile").findings if f.severity == "warning"]
