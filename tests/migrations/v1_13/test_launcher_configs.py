"""launcher-configs: accelerate YAML and DeepSpeed JSON keys the floors' accelerate (1.15) and deepspeed (0.19) no
longer accept, on files shaped like the PPO era's (`accelerate config` output, TRL's own zero configs)."""

from __future__ import annotations

import json

from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.v1_13.launcher_configs import MIGRATION as RULE

ACCELERATE_FSDP = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
downcast_bf16: 'no'
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch_policy: BACKWARD_PRE
  fsdp_offload_params: false
  fsdp_sharding_strategy: 1
ipex_config:
  ipex: false
  use_xpu: false
machine_rank: 0
main_training_function: main
num_processes: 8
"""


def migrate(text: str, name: str):
    result = migrate_source(text, options=Options(), rules=[RULE], path=f"repo/{name}", verify_idempotent=True)
    assert result.ok, result.errors
    return result


def test_accelerate_yaml_renames_prefetch_and_drops_an_idle_ipex_block():
    result = migrate(ACCELERATE_FSDP, "fsdp.yaml")
    assert result.text == ACCELERATE_FSDP.replace("fsdp_backward_prefetch_policy:", "fsdp_backward_prefetch:").replace(
        "ipex_config:\n  ipex: false\n  use_xpu: false\n", "")
    assert {f.severity for f in result.findings} == {"info"} and all(f.changed for f in result.findings)


def test_an_ipex_block_that_enables_ipex_is_marked_not_removed():
    text = ACCELERATE_FSDP.replace("  ipex: false", "  ipex: true")
    result = migrate(text, "cpu.yml")
    assert "ipex_config:\n  ipex: true" in result.text
    marker_line = result.text.splitlines()[result.text.splitlines().index("ipex_config:") - 1]
    assert marker_line.startswith("# TODO(trl-compat): ipex_config") and marker_line.endswith(" [launcher-configs]")
    assert any(f.severity == "manual" for f in result.findings)


DS_CONFIG = {
    "train_micro_batch_size_per_gpu": "auto",
    "amp": {"enabled": False, "opt_level": "O1"},
    "zero_optimization": {"stage": 3, "mics_shard_size": -1, "overlap_comm": True},
    "seq_parallel_comm_data_type": "fp32",
    "sparse_attention": {"mode": "fixed", "block": 16},
}


def test_deepspeed_json_drops_switched_off_keys_renames_and_reports_live_features():
    text = json.dumps(DS_CONFIG, indent=4) + "\n"
    result = migrate(text, "ds_zero3.json")
    new = json.loads(result.text)
    assert new == {
        "train_micro_batch_size_per_gpu": "auto",
        "zero_optimization": {"stage": 3, "overlap_comm": True},
        "seq_parallel_communication_data_type": "fp32",
        "sparse_attention": {"mode": "fixed", "block": 16},
    }
    assert result.text.startswith('{\n    "train_micro_batch_size_per_gpu": "auto",\n    "zero_optimization"')
    manual = [f for f in result.findings if f.severity == "manual"]
    assert len(manual) == 1 and manual[0].message.startswith("sparse_attention")
    assert manual[0].line == result.text.splitlines().index('    "sparse_attention": {') + 1  # in the file as written


def test_last_member_and_compact_json_keep_valid_json():
    text = '{"train_batch_size": 8, "zero_optimization": {"stage": 2, "zeropp_loco_param": null}}'
    result = migrate(text, "zero2.json")
    assert result.text == '{"train_batch_size": 8, "zero_optimization": {"stage": 2}}'


def test_files_that_are_not_launcher_configs_are_left_alone():
    for name, text in [
        ("package.json", json.dumps({"name": "x", "amp": {"enabled": False}})),  # not a DeepSpeed config
        ("docker-compose.yml", "services:\n  web:\n    fsdp_backward_prefetch_policy: BACKWARD_PRE\n"),
        ("broken.json", '{"zero_optimization": {"stage": 3}, "amp": '),
        ("ds.json", json.dumps({"zero_optimization": {"stage": 3}, "note": "amp and elasticity were removed"})),
    ]:
        result = migrate(text, name)
        assert result.text == text, name
        assert not result.findings, name


def test_only_json_named_like_a_deepspeed_config_is_read():
    for name in ("configs/ds_config.json", "deepspeed_zero3.json", "zero2.json", "accelerate/fsdp.yaml"):
        assert RULE.matches(name), name
    for name in ("data/lima.json", "package.json", "train.jsonl"):  # data files are never opened by this rule
        assert not RULE.matches(name), name
