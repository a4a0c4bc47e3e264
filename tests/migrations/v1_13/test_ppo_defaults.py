"""`ppo_to_grpo.defaults`: the PPOConfig defaults a script got, from the atlas, for the releases it could run on.

Oracle: the values below were read by hand from the release wheels' `trl/trainer/ppo_config.py`
(`unzip -p trl-0.7.10-py3-none-any.whl trl/trainer/ppo_config.py`): `model_name: Optional[str] = None` and
`batch_size: int = 256` in 0.7.10; `"gpt2"` and `128` in 0.7.11; `query_dataset` first declared in 0.7.2;
`trl.import_utils.is_npu_available` exported 0.7.5 .. 0.10.1.
"""

from __future__ import annotations

from migrations.v1_13.ppo_to_grpo.defaults import Unknown, admitted_releases, field_default, ppo_fields


def test_classic_defaults_per_release() -> None:
    assert ppo_fields("0.7.10", "classic", False)["model_name"] == "None"
    assert ppo_fields("0.7.11", "classic", False)["model_name"] == "'gpt2'"
    assert ppo_fields("0.7.10", "classic", False)["batch_size"] == "256"
    assert ppo_fields("0.8.6", "classic", False)["batch_size"] == "128"
    assert ppo_fields("0.12.2", "classic", False) is None  # the classic config ended with 0.11


def test_a_pin_gives_one_default() -> None:
    releases = admitted_releases("classic", False, ("0.8.5", "0.8.6"), {"model_name"}, set())
    assert releases == ["0.8.5", "0.8.6"]
    assert field_default("model_name", releases, "classic", False) == "gpt2"
    assert field_default("batch_size", releases, "classic", False) == 128
    assert field_default("log_with", releases, "classic", False) is None


def test_unpinned_defaults_that_changed_are_unknown() -> None:
    releases = admitted_releases("classic", False, None, set(), set())
    assert releases[0] == "0.4.0" and releases[-1] == "0.11.4"
    found = field_default("model_name", releases, "classic", False)
    assert isinstance(found, Unknown) and "None in 0.4.0..0.7.10" in found.why and "'gpt2' in 0.7.11..0.11.4" in found.why
    assert field_default("log_with", releases, "classic", False) is None  # None in every classic release


def test_fields_and_imports_narrow_the_releases() -> None:
    assert admitted_releases("classic", False, None, {"query_dataset"}, set())[0] == "0.7.2"
    narrowed = admitted_releases("classic", False, None, set(), {"trl.import_utils.is_npu_available"})
    assert (narrowed[0], narrowed[-1]) == ("0.7.5", "0.10.1")
    assert admitted_releases("classic", False, ("0.12.0",), set(), set()) == []
    assert isinstance(field_default("model_name", [], "classic", False), Unknown)
