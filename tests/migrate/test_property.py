"""Property tests over generated Python modules: a module without trigger names is never changed (nor parsed), the
output always parses, and a second run is a no-op. Run with the shipped rule alone and with every registered rule."""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compat.migrate import migrate_source
from compat.migrate.engine import triggered_python_rules
from migrations import all_migrations

from ._util import RULE

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

IMPORTS = [
    "import trl", "import trl as t", "from trl import SFTConfig", "from trl import SFTConfig as C",
    "from trl.trainer.sft_config import SFTConfig", "from mylib import SFTConfig", "import os",
    "from trl import SFTTrainer, GRPOConfig", "from trl.experimental.ppo import PPOTrainer, PPOConfig",
    "from transformers import TrainingArguments",
]
CALLEES = ["SFTConfig", "C", "t.SFTConfig", "trl.SFTConfig", "SFTTrainer", "GRPOConfig", "PPOConfig",
           "TrainingArguments", "foo", "os.path.join"]
KEYWORDS = ["loss_type", "output_dir", "use_liger_kernel", "learning_rate", "beta", "pad_token"]
STRINGS = ["'chunked_nll'", '"chunked_nll"', "'nll'", "'dft'", "'out'", "r'chunked_nll'", "'''chunked_nll'''"]
VALUES = st.one_of(st.sampled_from(STRINGS), st.integers(-5, 5).map(str), st.sampled_from(["True", "None", "x"]))


@st.composite
def calls(draw):
    callee = draw(st.sampled_from(CALLEES))
    kws = draw(st.lists(st.tuples(st.sampled_from(KEYWORDS), VALUES), max_size=3, unique_by=lambda kv: kv[0]))
    return f"{callee}({', '.join(f'{k}={v}' for k, v in kws)})"


@st.composite
def statements(draw, depth=0):
    kind = draw(st.integers(0, 7 if depth < 2 else 4))
    if kind == 0:
        return [draw(st.sampled_from(IMPORTS))]
    if kind == 1:
        return [f"{draw(st.sampled_from(['x', 'cfg', 'args.loss_type']))} = {draw(st.one_of(calls(), VALUES))}"]
    if kind == 2:
        return [draw(calls())]
    if kind == 3:
        return [f"# {draw(st.sampled_from(['chunked_nll note', 'plain comment']))}", "pass"]
    if kind == 4:
        return [f"y = [{draw(VALUES)}, {draw(VALUES)}]  # trailing"]
    body = [line for _ in range(draw(st.integers(1, 3))) for line in draw(statements(depth + 1))]
    header = {5: "if x:", 6: "def f(x):", 7: "class K:"}[kind]
    if kind == 6 and draw(st.booleans()):
        body.insert(0, '"""chunked_nll docstring."""')
    return [header] + ["    " + line for line in body]


@st.composite
def modules(draw):
    lines = [line for _ in range(draw(st.integers(1, 8))) for line in draw(statements())]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines)
    return text + (newline if draw(st.booleans()) else "")


def _check(text: str, rules) -> None:
    result = migrate_source(text, rules=rules)
    if not triggered_python_rules(text, rules):
        assert not result.parsed and not result.changed and result.text == text
        return
    cst.parse_module(text)  # the generator only makes valid modules
    cst.parse_module(result.text)  # the output always parses (the original when a rule failed)
    if result.ok:
        again = migrate_source(result.text, rules=rules)
        assert again.ok and not again.changed, (text, result.text, again.text)
    else:
        assert result.text == text


@pytest.mark.slow
@SETTINGS
@given(modules())
def test_shipped_rule_properties(text):
    _check(text, [RULE])


@pytest.mark.slow
@SETTINGS
@given(modules())
def test_all_registered_rules_properties(text):
    _check(text, all_migrations())


@SETTINGS
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=400))
def test_text_without_triggers_is_never_parsed_or_changed(text):
    rules = all_migrations()
    triggers = [t for r in rules for t in r.triggers]
    if any(t in text for t in triggers):
        return
    result = migrate_source(text, rules=rules)
    assert not result.parsed and not result.changed and result.text == text and result.ok
