"""The loader API on facts read from the release wheels (each checked by hand with `unzip -p` on the wheel).

* trl 0.28.0 `trl/__init__.py` lists "PPOTrainer" in `_import_structure["trainer"]`; 0.29.0 does not, and
  `trl/experimental/ppo/__init__.py` exports it.
* trl 1.12.0 has `trl/experimental/ppo/`; 1.13.0 has no such folder.
* trl 0.11.4 `SFTTrainer.__init__` takes `tokenizer=`; 0.12.0 takes `processing_class=` with
  `@deprecate_kwarg("tokenizer", new_name="processing_class", ...)`; 0.16.0 has neither the parameter nor the decorator.
"""

from __future__ import annotations

import time

import pytest

from migrations.atlas import Atlas, Event, UnknownReleaseError


@pytest.fixture(scope="module")
def trl() -> Atlas:
    return Atlas.load("trl")


def test_releases_cover_0_4_to_1_16_without_prereleases(trl):
    releases = trl.releases()
    assert releases[0] == "0.4.0" and releases[-1] == "1.16.0"
    assert len(releases) == 97
    assert all(trl.source(r)[0] == "wheel" for r in releases)
    assert trl.release("1.16") == "1.16.0"
    with pytest.raises(UnknownReleaseError, match="0.4.0 .. 1.16.0"):
        trl.release("0.3.1")


def test_ppo_trainer_moved_to_experimental_at_0_29(trl):
    assert trl.has("0.28.0", "trl.PPOTrainer")
    assert not trl.has("0.29.0", "trl.PPOTrainer")
    assert trl.resolve("0.28.0", "trl.PPOTrainer").qualname == "trl.trainer.ppo_trainer.PPOTrainer"
    events = trl.history("trl.PPOTrainer")
    assert events[0] == Event("added", "0.4.0")
    assert events[-1].kind == "moved" and events[-1].release == "0.29.0"
    assert events[-1].to[0] == "trl.experimental.ppo.PPOTrainer"
    # the 0.28 shim takes (*args, **kwargs): its signature is the experimental trainer's
    assert trl.signature("0.28.0", "trl.PPOTrainer").origin == "trl.experimental.ppo.ppo_trainer.PPOTrainer"


def test_experimental_ppo_gone_at_1_13(trl):
    assert trl.has_module("1.12.0", "trl.experimental.ppo")
    assert not trl.has_module("1.13.0", "trl.experimental.ppo")
    assert trl.history("trl.experimental.ppo")[-1] == Event("removed", "1.13.0")
    assert "PPOTrainer" not in trl.exports("1.16.0", "trl")


def test_sft_trainer_tokenizer_renamed_at_0_12_and_gone_at_0_16(trl):
    assert "tokenizer" in trl.signature("0.11.4", "trl.SFTTrainer").names()
    sig = trl.signature("0.12.0", "trl.SFTTrainer")
    assert "processing_class" in sig.names() and ("tokenizer", "processing_class") in sig.renamed
    assert ("tokenizer", "processing_class") not in trl.signature("0.16.0", "trl.SFTTrainer").renamed
    events = trl.history("trl.SFTTrainer", keyword="tokenizer")
    assert [(e.kind, e.release) for e in events[-2:]] == [("renamed", "0.12.0"), ("removed", "0.16.0")]
    assert events[-2].to == ("processing_class",)


def test_trainer_keywords_that_moved_into_the_config(trl):
    # trl 0.12.2 DPOTrainer.__init__ takes beta=; 0.13.0 does not, and DPOConfig declares `beta`
    assert trl.history("trl.DPOTrainer", keyword="beta")[-1] == Event("moved", "0.13.0", ("trl.DPOConfig.beta",),
                                                                       "a field of DPOConfig")
    assert trl.history("trl.SFTTrainer", keyword="packing")[-1].to == ("trl.SFTConfig.packing",)
    assert trl.accepts("0.12.2", "trl.DPOTrainer", "beta") == "parameter"
    assert trl.accepts("0.13.0", "trl.DPOTrainer", "beta") is None


def test_trainer_kwargs_are_in_the_config_on_1_16(trl):
    sft = trl.signature("1.16.0", "trl.SFTTrainer")
    assert sft.var_keyword is None and "max_seq_length" not in sft.names()
    fields = trl.config_fields("1.16.0", "trl.SFTConfig")
    assert fields["max_length"].default == "1024"
    # inherited from transformers.TrainingArguments, read from the transformers wheel
    assert fields["output_dir"].origin == "transformers.training_args.TrainingArguments"
    assert "dataset_text_field" in fields


def test_resolution_follows_lazy_entries_and_re_exports(trl):
    # bound twice: the `if TYPE_CHECKING:` import (recorded) and the lazy `_import_structure` entry
    assert trl.exports("0.8.6", "trl")["PPOTrainer"] == ("import", "trl.trainer.PPOTrainer")
    assert trl.exports("0.8.6", "trl")["get_kbit_device_map"][1] == "trl.trainer.utils.get_kbit_device_map"
    assert trl.resolve("0.8.6", "trl.PPOConfig").kind == "class"
    assert trl.resolve("0.8.6", "trl.trainer").kind == "module"
    assert trl.resolve("1.16.0", "trl.nope") is None
    assert trl.has("0.8.6", "trl.commands.cli_utils.TrlParser") and not trl.has("0.13.0", "trl.commands.cli_utils")


def test_companion_transformers_release_is_era_faithful(trl):
    # the newest transformers built before trl 0.8.6 (2024-04-22) that it allows: 4.39.3 (2024-04-02)
    assert trl.companion_release("0.8.6") == "4.39.3"
    assert trl.companion_release("1.16.0").startswith(("4.56", "5."))


def test_loading_is_cheap_and_imports_no_torch_or_trl():
    import subprocess
    import sys

    code = ("import sys, time; t = time.perf_counter(); from migrations.atlas import Atlas; "
            "Atlas.load('trl').has('1.16', 'trl.SFTTrainer'); "
            "print(time.perf_counter() - t, 'torch' in sys.modules, 'trl' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[1:] == ["False", "False"]
    t = time.perf_counter()
    Atlas.load("trl")
    assert time.perf_counter() - t < 0.01  # cached


def test_gone_lists_what_an_old_release_has_and_a_new_one_lacks(trl):
    gone = trl.gone("0.8.6", "1.16.0")
    assert gone["trl.PPOTrainer"].kind == "moved" and gone["trl.PPOTrainer"].release == "0.29.0"
    assert gone["trl.core"] == Event("removed", "0.25.0")
    assert "trl.SFTTrainer" not in gone and "trl.core.LengthSampler" not in gone  # its module is listed instead
    assert set(trl.gone("1.13.0", "1.16.0", modules="trl.experimental")) >= {"trl.experimental.bco",
                                                                            "trl.experimental.xpo"}


def test_the_atlas_command_line(capsys):
    from migrations.atlas.__main__ import main

    assert main(["history", "trl.SFTTrainer", "--keyword", "packing"]) == 0
    assert capsys.readouterr().out.splitlines() == ["added at 0.4.2",
                                                    "moved at 0.13.0 -> trl.SFTConfig.packing (a field of SFTConfig)"]
    assert main(["gone", "1.15.0", "1.16.0"]) == 0
    assert "trl.experimental.ssd: removed at 1.16.0" in capsys.readouterr().out.splitlines()
    assert main(["fields", "1.16", "trl.SFTConfig"]) == 0
    assert "max_length: int | None = 1024  # trl.trainer.sft_config.SFTConfig" in capsys.readouterr().out
    assert main(["signature", "9.9", "trl.SFTTrainer"]) == 2
