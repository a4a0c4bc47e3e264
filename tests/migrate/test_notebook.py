"""Notebooks: code cells through the rules, IPython syntax and %% cells untouched, JSON byte-identical elsewhere."""

from __future__ import annotations

import ast
import json
import os

import nbformat
import pytest

from compat.migrate import migrate_paths, migrate_source
from compat.migrate.notebook import mask, unmask

from ._util import RULE


def make_notebook(path, cells, *, indent=1) -> bytes:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for kind, src in cells:
        if kind == "code":
            cell = nbformat.v4.new_code_cell(src)
            cell.outputs = [nbformat.v4.new_output("stream", text="héllo 1.0000000001\n")]
            cell.execution_count = 3
        else:
            cell = nbformat.v4.new_markdown_cell(src)
        nb.cells.append(cell)
    if indent == 1:
        nbformat.write(nb, str(path))
    else:  # another writer's layout: indent 2, ASCII escapes, no final newline
        path.write_text(json.dumps(nb, indent=indent, ensure_ascii=True, sort_keys=False), encoding="utf-8")
    return path.read_bytes()


CELLS = [
    ("markdown", "# Training with `chunked_nll`"),
    ("code", "%load_ext autoreload\n!pip install trl\nfrom trl import SFTConfig"),
    ("code", "%%bash\necho chunked_nll"),
    ("code", "x = 1\nhelp?\nfiles = !ls\nif x:\n    !echo hi \\\n        there\n    cfg = SFTConfig(loss_type='chunked_nll')"),
    ("code", "print('untouched')"),
]


@pytest.mark.parametrize("indent", [1, 2])
def test_changed_cell_spliced_rest_byte_identical(tmp_path, indent):
    path = tmp_path / "train.ipynb"
    before = make_notebook(path, CELLS, indent=indent)
    report = migrate_paths([str(path)], rules=[RULE])
    assert report.exit_code == 0 and report.files[0].status == "changed" and report.files[0].written
    after = path.read_bytes()
    nb_before, nb_after = json.loads(before), json.loads(after)
    # cell 3 (imports resolved from cell 1) changed, IPython lines kept verbatim
    assert "".join(nb_after["cells"][3]["source"]) == CELLS[3][1].replace("'chunked_nll'", "'nll'")
    # everything else is the same JSON value ...
    nb_before["cells"][3]["source"] = nb_after["cells"][3]["source"]
    assert nb_before == nb_after
    # ... and the same bytes: only the source array of cell 3 differs
    assert before.count(b"chunked_nll") == 3 and after.count(b"chunked_nll") == 2  # markdown and %% cell untouched
    i = before.index(b"cfg = SFTConfig")
    j = after.index(b"cfg = SFTConfig")
    assert before[:i] == after[:j]
    tail = b"chunked_nll')\""
    assert before[before.index(tail) + len(tail) :] == after[after.index(b"'nll')\"") + len(b"'nll')\"") :]


def test_finding_points_at_the_cell_and_line(tmp_path):
    path = tmp_path / "nb.ipynb"
    text = make_notebook(path, [("code", "import trl"), ("code", "y = 2\ntrl.SFTConfig(loss_type='chunked_nll')")]).decode()
    result = migrate_source(text, rules=[RULE], path="nb.ipynb")
    (finding,) = result.findings
    assert (finding.cell, finding.line) == (1, 2)


def test_unchanged_notebook_is_not_written(tmp_path):
    path = tmp_path / "nb.ipynb"
    make_notebook(path, [("code", "print('chunked_nll is mentioned')\n# chunked_nll")])
    os.utime(path, (1_000_000, 1_000_000))
    report = migrate_paths([str(tmp_path)], rules=[RULE])
    assert report.files[0].status == "unchanged" and report.files[0].parsed
    assert os.stat(path).st_mtime == 1_000_000


def test_cell_that_does_not_parse_is_skipped_others_migrated(tmp_path):
    path = tmp_path / "nb.ipynb"
    src_bad = "for x in:\n    pass  # chunked_nll"
    make_notebook(path, [("code", "from trl import SFTConfig"), ("code", src_bad),
                         ("code", "SFTConfig(loss_type='chunked_nll')")])
    report = migrate_paths([str(path)], rules=[RULE])
    entry = report.files[0]
    assert entry.status == "changed", entry.errors
    nb = json.loads(path.read_text())
    assert "".join(nb["cells"][1]["source"]) == src_bad
    assert "".join(nb["cells"][2]["source"]) == "SFTConfig(loss_type='nll')"
    assert [(f.severity, f.cell) for f in entry.findings if f.rule == "engine"] == [("warning", 1)]


def test_todo_marker_inside_a_cell(tmp_path):
    path = tmp_path / "nb.ipynb"
    make_notebook(path, [("code", "!nvidia-smi\nargs.loss_type = 'chunked_nll'")])
    migrate_paths([str(path)], rules=[RULE])
    src = "".join(json.loads(path.read_text())["cells"][0]["source"])
    lines = src.splitlines()
    assert lines[0] == "!nvidia-smi" and lines[1].startswith("# TODO(trl-compat):") and lines[2].startswith("args.")
    again = migrate_paths([str(path)], rules=[RULE])
    assert again.files[0].status == "unchanged"


@pytest.mark.parametrize(
    "src",
    ["!ls\n%time x = 1\n", "a = !ls -l\nobj??\n?obj\n", "if y:\n    %pdb on\n", "!echo a \\\n  b\n", "x = 1"],
)
def test_mask_roundtrip(src):
    masked, taken = mask(src)
    assert "!" not in masked and "%" not in masked and "?" not in masked
    assert unmask(masked, taken) == src


def test_an_import_used_only_by_ipython_lines_or_a_skipped_cell_is_not_unused(tmp_path):
    """The unused-import drop of a gone name (ruff's F401 fix) counts what the rules never see: a `%time` line, a
    `%%` cell, a cell that does not parse."""
    import migrations
    from migrations.base import Options

    rules = list(migrations.select(Options()))
    gone = "from trl.trainer.utils import flush_right\nimport trl"
    for hidden in ("%time y = flush_right(x)", "%%timeit\nflush_right(x)", "y = flush_right(x) +"):
        text = make_notebook(tmp_path / "a.ipynb", [("code", gone), ("code", hidden)]).decode("utf-8")
        result = migrate_source(text, rules=rules, path="a.ipynb")
        cell = json.loads(result.text)["cells"][0]["source"]
        assert "from trl.trainer.utils import flush_right" in "".join(cell), hidden
    text = make_notebook(tmp_path / "b.ipynb", [("code", gone), ("code", "%time y = 1")]).decode("utf-8")
    result = migrate_source(text, rules=rules, path="b.ipynb")
    assert "flush_right" not in "".join(json.loads(result.text)["cells"][0]["source"])


def test_a_one_line_automagic_cell_is_kept_and_the_notebook_migrated(tmp_path):
    """`pip install -U transformers` alone in a cell (IPython automagic, SAMANTA1401/llm_finetune): the joined module
    parses with it masked, the TRL cell is migrated, the install line is put back verbatim."""
    path = tmp_path / "nb.ipynb"
    install = "pip install -U transformers peft\n"
    make_notebook(path, [("code", install), ("code", "from trl import SFTConfig"),
                         ("code", "SFTConfig(loss_type='chunked_nll')")])
    report = migrate_paths([str(path)], rules=[RULE])
    entry = report.files[0]
    assert entry.status == "changed" and not [f for f in entry.findings if f.rule == "engine"], entry.findings
    nb = json.loads(path.read_text())
    assert "".join(nb["cells"][0]["source"]) == install
    assert "".join(nb["cells"][2]["source"]) == "SFTConfig(loss_type='nll')"


def test_an_import_a_rule_adds_goes_below_the_install_cell(tmp_path):
    """hoa-10/RLHF's DPO notebook: `pip install git+...trl.git` alone in the first cell, and a rule that adds an
    import. It went into the first cell, above the install (it ran before the packages were there; with two lines
    IPython no longer applied automagic either): it goes after the imports of the first cell with code now, and
    the install cell stays as written; the notebook still parses for the check."""
    from migrations import get

    path = tmp_path / "nb.ipynb"
    install = "pip install git+https://github.com/huggingface/trl.git\n"
    make_notebook(path, [("code", install), ("code", "from trl import SFTConfig\n"),
                         ("code", "args = SFTConfig(output_dir='o', warmup_ratio=0.1)")])
    report = migrate_paths([str(path)], rules=[get("warmup-ratio")])
    assert report.files[0].status == "changed", report.files[0].findings
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    assert cells[0] == install
    assert cells[1] == "from trl import SFTConfig\nfrom compat.trl import warmup\n"
    assert "**warmup(0.1)" in cells[2]
    for cell in cells[1:]:  # IPython's rule: a `%` line is a magic on any line of a cell; the rest must be Python
        ast.parse("".join(line for line in cell.splitlines(keepends=True) if not line.startswith("%")))


@pytest.mark.parametrize("src, masked", [
    ("pip install -U trl==0.7.4\n", True), ("\n  conda install -c pytorch torch", True), ("cd data", True),
    ("pip = 1", False), ("pip  = 2", False), ("pip, x = 1, 2", False), ("ls", False),  # Python: a name, an assignment
    ("pip.main(['install', 'trl'])", False), ("x = 1\npip install trl", False),  # two lines: no automagic
    ("pip install trl\n\n", False), ("install trl now", False),  # IPython counts the trailing blank line
])
def test_automagic_cells(src, masked):
    from compat.markers import automagic_cell

    assert automagic_cell(src) is masked
    out, taken = mask(src)
    assert bool(taken) is masked and unmask(out, taken) == src


def test_install_lines_are_raised_and_get_trl_compat(tmp_path):
    """A notebook's `!pip install trl==0.7.4 ...` would install the old stack before the migrated code runs: with
    `dependency-manifests` in the run its pins are raised like a requirements file's, and `trl-compat` goes beside
    `trl` once the migrated code imports `compat`; a notebook without trl keeps its install lines."""
    from migrations import get

    rules = [get("warmup-ratio"), get("dependency-manifests")]
    path = tmp_path / "nb.ipynb"
    make_notebook(path, [("code", "!pip install -q trl==0.7.4 transformers==4.34.0\n%matplotlib inline\n"),
                         ("code", "from trl import SFTConfig\n"),
                         ("code", "args = SFTConfig(output_dir='o', warmup_ratio=0.1)")])
    report = migrate_paths([str(path)], rules=rules)
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    assert cells[0].startswith('!pip install -q trl==1.16.0 "trl-compat>=') and '"transformers>=4.56.2"' in cells[0]
    assert cells[0].endswith("\n%matplotlib inline\n")
    assert {f.cell for f in report.files[0].findings if f.rule == "dependency-manifests"} == {0}
    # no trl anywhere: left as it is
    other = tmp_path / "other.ipynb"
    make_notebook(other, [("code", "!pip install transformers==4.34.0\n"), ("code", "import torch\n")])
    before = other.read_text()
    migrate_paths([str(other)], rules=rules)
    assert other.read_text() == before


def test_a_vcs_install_of_trl_in_a_notebook_is_reported(tmp_path):
    """AD-RNinawe/Flan-T5-detoxification: `%pip install git+https://github.com/lvwerra/trl.git@25fa1bd` installs a
    fixed commit of 2023 under the migrated code: a warning in the cell, as the manifests report a VCS trl."""
    from migrations import get

    path = tmp_path / "nb.ipynb"
    make_notebook(path, [("code", "%pip install --no-deps git+https://github.com/lvwerra/trl.git@25fa1bd\n"),
                         ("code", "from trl import SFTConfig\nargs = SFTConfig(output_dir='o', warmup_ratio=0.1)")])
    report = migrate_paths([str(path)], rules=[get("warmup-ratio"), get("dependency-manifests")])
    [warning] = [f for f in report.files[0].findings if f.severity == "warning"]
    assert warning.cell == 0 and warning.message.startswith("trl is installed from a VCS/URL/local path")
    assert "".join(json.loads(path.read_text())["cells"][0]["source"]).startswith("%pip install --no-deps git+")


def test_trl_compat_joins_an_install_line_of_a_notebook_without_trl(tmp_path):
    """brevdev/notebooks: a transformers notebook (no trl) whose code a transformers 5 rule points at `compat.trl`
    installs `transformers peft accelerate` and never trl-compat (ModuleNotFoundError at the first migrated cell):
    `trl-compat` joins the install line of the stack, right after `pip install`; its pins stay (no trl here). A
    notebook with no install line at all gets a warning saying to install it."""
    from migrations import get

    rules = [get("warmup-ratio"), get("dependency-manifests")]
    path = tmp_path / "nb.ipynb"
    make_notebook(path, [("code", "!pip install -q wandb\n!pip install -q -U transformers==4.38.0 peft\n"),
                         ("code", "from transformers import TrainingArguments\n"),
                         ("code", "args = TrainingArguments(output_dir='o', warmup_ratio=0.1)")])
    migrate_paths([str(path)], rules=rules)
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    assert cells[0].startswith('!pip install -q wandb\n!pip install "trl-compat>=')
    assert cells[0].endswith(' -q -U transformers==4.38.0 peft\n')
    bare = tmp_path / "bare.ipynb"
    make_notebook(bare, [("code", "from transformers import TrainingArguments\n"),
                         ("code", "args = TrainingArguments(output_dir='o', warmup_ratio=0.1)")])
    report = migrate_paths([str(bare)], rules=rules)
    assert any(f.severity == "warning" and "installs nothing" in f.message for f in report.files[0].findings)
