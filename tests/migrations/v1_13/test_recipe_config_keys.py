"""recipe-config-keys: YAML recipes with keys of fields the target's configs dropped, marked above the key."""

from __future__ import annotations

import pytest
from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.v1_13.recipe_config_keys import MIGRATION as RULE

RECIPE = """\
# DPO recipe (HollyRiver/HFRL's config/DPO_config_*.yaml layout)
model_name_or_path: Qwen/Qwen2-0.5B
output_dir: out
learning_rate: 5.0e-7
per_device_train_batch_size: 2
beta: 0.1
max_prompt_length: 512
model_adapter_name: policy
dataset_mixer: {a: 1.0}
"""


def _run(text: str, transformers: str = "5.24.0", uses_trl: bool = True, path: str = "/p/recipes/dpo.yaml"):
    options = Options(target_trl=Version("1.16.0"), targets=(("transformers", Version(transformers)),),
                      uses_trl=uses_trl)
    rules = [RULE] if RULE.applies(options) else []
    result = migrate_source(text, options=options, rules=rules, path=path, verify_idempotent=True)
    assert result.ok, result.errors
    return result.text, [f for f in result.findings if f.rule == RULE.id]


def test_the_installed_trl_parser_refuses_the_keys(tmp_path):
    """The oracle: TRL 1.16's TrlParser with `--config` refuses a key no dataclass of it declares (TRL 0.13 ignored
    it); the keys the rule leaves alone are the DPOConfig's own and the project's (here: none of the parser's)."""
    from trl import DPOConfig, TrlParser

    recipe = tmp_path / "dpo.yaml"
    recipe.write_text("output_dir: out\nuse_cpu: true\nbf16: false\nbeta: 0.1\nmax_prompt_length: 512\n",
                      encoding="utf-8")
    with pytest.raises(ValueError, match="Unknown arguments from config file.*max_prompt_length"):
        TrlParser((DPOConfig,)).parse_args_and_config(["--config", str(recipe)])
    recipe.write_text("output_dir: out\nuse_cpu: true\nbf16: false\nbeta: 0.1\n", encoding="utf-8")
    (config,) = TrlParser((DPOConfig,)).parse_args_and_config(["--config", str(recipe)])
    assert config.beta == 0.1


def test_removed_keys_are_marked_and_nothing_is_edited():
    out, findings = _run(RECIPE)
    assert [f.line for f in findings] == [7, 8] and all(f.severity == "manual" for f in findings)
    assert "max_prompt_length: no TRL 1.16.0 config" in findings[0].message
    assert "Unknown arguments from config file" in findings[0].message
    assert "'default'" in findings[1].message
    assert [line for line in out.splitlines() if "TODO(trl-compat)" not in line] == RECIPE.splitlines()
    assert out.count("# TODO(trl-compat): ") == 2


def test_transformers_fields_follow_the_target_transformers():
    text = "output_dir: out\nlearning_rate: 1.0e-5\nwarmup_ratio: 0.1\n"
    _out, findings = _run(text)
    assert [f.line for f in findings] == [3] and "warmup_steps" in findings[0].message
    assert _run(text, transformers="4.57.6")[1] == []  # 4.x still has the field


def test_left_alone():
    # not a recipe (one core key), an accelerate config, a project of no TRL, project keys only
    for text in ("learning_rate: 1.0e-5\nmax_prompt_length: 512\n",
                 "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\noutput_dir: o\nlearning_rate: 1\n"
                 "max_prompt_length: 5\n",
                 "output_dir: out\nlearning_rate: 1.0e-5\nmy_option: 3\nbatch_size: 8\n"):
        assert _run(text) == (text, []), text
    assert _run(RECIPE, uses_trl=False) == (RECIPE, [])
