"""`removed-load-tool`: marked at the import and each use (TRL's tool examples of the 0.7 era), never rewritten."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v4_52.removed_load_tool import MIGRATION as RULE
from tests.migrations._driver import noop, run

PREFIX = "# TODO(trl-compat): load_tool was removed in transformers 4.52 (no successor)"


def test_the_trl_tools_example_is_marked():
    # TRL v0.7.11 examples/research_projects/tools/calculator.py
    src = ("from transformers import AutoTokenizer, load_tool\n\n"
           "tools = {\"SimpleCalculatorTool\": load_tool(\"ybelkada/simple-calculator\")}\n")
    out, findings = run(RULE, src)
    lines = out.splitlines()
    assert lines[0].startswith(PREFIX) and lines[1] == src.splitlines()[0]
    assert lines[3].startswith(PREFIX) and lines[4] == src.splitlines()[2]
    assert len(findings) == 2 and not any(f.changed for f in findings)
    out, _ = run(RULE, "from transformers.tools import load_tool\ntool = load_tool('calc')\n")
    assert out.startswith(PREFIX)


def test_noop():
    noop(RULE, "from smolagents import load_tool\n\nt = load_tool('x')\n")
    noop(RULE, "def load_tool(name):\n    return name\n\nload_tool('x')\n")


def test_gone_on_every_release_the_manifest_allows():
    atlas = Atlas.load("transformers")
    assert atlas.has("4.51.3", "transformers.load_tool")
    for release in ("4.52.4", "4.56.2", "5.24.0"):
        assert not atlas.has(release, "transformers.load_tool"), release
