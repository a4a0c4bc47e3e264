"""What `compat.trl` and `compat.losses` export, as data: name -> the places it resolves to, in order.

Kept apart from those modules (which check the installed stack against the floors when imported) so that
`trl-compat check` can hold `from compat.trl import NAME` against the names that exist without importing them: the
check must run in an environment that violates the floors. Nothing here imports anything.
"""

from __future__ import annotations

_EXP = "trl.experimental"

_REF = "reference_impl"

# the diffusion names TRL 0.24 removed (DDPO, AlignProp and what their example scripts import): reference_impl.diffusion
_DIFFUSION_TOP = ("DDPOTrainer", "DDPOConfig", "AlignPropTrainer", "AlignPropConfig", "DDPOStableDiffusionPipeline",
                  "DefaultDDPOStableDiffusionPipeline")
_DIFFUSION_AUX = ("aesthetic_scorer", "AestheticScorer")

TRL_CANDIDATES: dict[str, tuple[tuple[str, str], ...]] = {
    # stable trainers and configs (top level throughout 1.9 - 1.16); reference_impl only when TRL is absent
    **{n: (("trl", n), (_REF, n)) for n in (
        "GRPOTrainer", "GRPOConfig", "RLOOTrainer", "RLOOConfig", "KTOTrainer", "KTOConfig", "DPOTrainer",
        "DPOConfig", "SFTTrainer", "SFTConfig", "RewardTrainer", "RewardConfig",
    )},
    # Online DPO only exists under trl.experimental.online_dpo since 0.29
    "OnlineDPOTrainer": ((f"{_EXP}.online_dpo", "OnlineDPOTrainer"), (_REF, "OnlineDPOTrainer")),
    "OnlineDPOConfig": ((f"{_EXP}.online_dpo", "OnlineDPOConfig"), (_REF, "OnlineDPOConfig")),
    # Distillation: stable from 1.10, experimental before
    "DistillationTrainer": (("trl", "DistillationTrainer"), (f"{_EXP}.distillation", "DistillationTrainer"),
                            (_REF, "DistillationTrainer")),
    "DistillationConfig": (("trl", "DistillationConfig"), (f"{_EXP}.distillation", "DistillationConfig"),
                           (_REF, "DistillationConfig")),
    # PRM: trl.experimental.prm until 1.13, removed in 1.14 (#7133) -> the reference implementation
    "PRMTrainer": ((f"{_EXP}.prm", "PRMTrainer"), (_REF, "PRMTrainer")),
    "PRMConfig": ((f"{_EXP}.prm", "PRMConfig"), (_REF, "PRMConfig")),
    # BCO: trl.experimental.bco until 1.13, removed in 1.14 (#7136) -> the reference implementation
    "BCOTrainer": ((f"{_EXP}.bco", "BCOTrainer"), (_REF, "BCOTrainer")),
    "BCOConfig": ((f"{_EXP}.bco", "BCOConfig"), (_REF, "BCOConfig")),
    # XPO, Nash-MD: trl.experimental.{xpo,nash_md} until 1.13, removed in 1.14 -> the reference implementations
    **{n: ((f"{_EXP}.{pkg}", n), (_REF, n)) for pkg, names in (
        ("xpo", ("XPOTrainer", "XPOConfig")), ("nash_md", ("NashMDTrainer", "NashMDConfig"))) for n in names},
    # the real implementation lives in trl.experimental.utils; trl.create_reference_model is a FutureWarning wrapper
    "create_reference_model": ((f"{_EXP}.utils", "create_reference_model"), ("trl", "create_reference_model"),
                               (_REF, "create_reference_model")),
    # removed in 1.15 (no TRL successor function): TRL's while it exists, then the copies in compat/trl.py
    "prepare_multimodal_messages_vllm": (
        ("trl.data_utils", "prepare_multimodal_messages_vllm"),
        ("compat.trl", "_prepare_multimodal_messages_vllm"),
    ),
    "dft_loss": (("trl.trainer.sft_trainer", "dft_loss"), ("compat.trl", "_dft_loss")),
    # TRL 0.x helpers that no supported TRL line (1.13+) has: the copies in compat/trl.py, faithful to TRL's last body
    # (the removal release in the comment); no TRL candidate, since every supported line lacks them
    "setup_chat_format": (("compat.trl", "_setup_chat_format"),),  # removed in 0.26 (the 0.8-0.12 body)
    "SIMPLE_CHAT_TEMPLATE": (("compat.trl", "_SIMPLE_CHAT_TEMPLATE"),),  # removed in 0.27
    "SIMPLE_SFT_CHAT_TEMPLATE": (("compat.trl", "_SIMPLE_SFT_CHAT_TEMPLATE"),),  # removed in 0.25
    "SIMPLE_QUERY_CHAT_TEMPLATE": (("compat.trl", "_SIMPLE_QUERY_CHAT_TEMPLATE"),),  # removed in 0.11
    "get_exp_cap": (("compat.trl", "_get_exp_cap"),),  # removed in 0.29
    "cap_exp": (("compat.trl", "_cap_exp"),),  # removed in 0.29
    "get_kbit_device_map": (("compat.trl", "_get_kbit_device_map"),),  # removed in 1.8
    "is_wandb_available": (("compat.trl", "_is_wandb_available"),),  # trl.import_utils, removed in 0.11
    "is_diffusers_available": (("compat.trl", "_is_diffusers_available"),),  # trl.import_utils, removed in 0.24
    # trl.import_utils package probes removed in 1.11 (llm_blender's in 1.2): the find_spec checks of TRL 1.0.0
    **{n: (("compat.trl", f"_{n}"),) for n in ("is_fastapi_available", "is_pydantic_available", "is_uvicorn_available",
                                               "is_vllm_ascend_available", "is_llm_blender_available")},
    "is_torch_greater_2_0": (("compat.trl", "_is_torch_greater_2_0"),),  # trl.import_utils, removed in 0.12
    "FDivergenceConstants": (("compat.trl", "_FDivergenceConstants"),),  # trl.trainer.dpo_config, removed in 0.29
    # trl.trainer.rloo_trainer / ppov2_trainer / ppo_trainer (0.9.2 - 0.25), trl.experimental.ppo (0.26 - 1.12): 1.0
    "INVALID_LOGPROB": (("compat.trl", "_INVALID_LOGPROB"),),
    # trl.trainer.utils: PeftSavingCallback removed in 0.7.5 (the 0.7.4 body); the PPOv2/RLOO generation helpers
    # moved to trl.experimental.ppo in 0.27 and removed in 1.13 (the 0.26.2 = 1.12.0 bodies)
    **{n: (("compat._trainer_utils", n),) for n in (
        "PeftSavingCallback", "batch_generation", "generate", "forward", "truncate_response", "print_rich_table",
    )},
    # trl.trainer.utils (0.10 - 0.26), trl.experimental.utils until 1.13 with the same body; 1.16's takes a list of
    # stop token ids
    "truncate_right": (("compat._trainer_utils", "truncate_right"),),
    # trl.trainer.utils 0.11 - 0.24 (and trl.trainer.reward_trainer until 0.23), no successor: the 0.19.1 body
    "decode_and_strip_padding": (("compat._trainer_utils", "decode_and_strip_padding"),),
    # the PPO (v1) helpers: trl.trainer.utils's KL controllers and trl.core's statistics helpers (removed in 0.14, the
    # 0.13.0 bodies), trl.core.PPODecorators (removed in 0.24, the 0.23.1 class), RunningMoments and
    # get_global_statistics (trl.trainer.utils, removed in 0.29, the 0.28.0 bodies)
    **{n: (("compat._trainer_utils", n),) for n in (
        "AdaptiveKLController", "FixedKLController", "stack_dicts", "stats_to_np", "convert_to_scalar",
        "PPODecorators", "RunningMoments", "get_global_statistics",
    )},
    # no successor: exact_div (trl.trainer.utils until 0.26, trl.experimental.ppo until 1.12: the 1.12.0 function,
    # taking 0.6 - 0.8's call form too) and compute_accuracy (until 0.26, trl.experimental.prm until 1.13: 1.13.0's)
    **{n: (("compat._trainer_utils", n),) for n in ("exact_div", "compute_accuracy")},
    # trl.env_utils.strtobool (0.9.6 - 0.12.2; the module went in 0.13): the 0.12.2 function
    "strtobool": (("compat._env_utils", "strtobool"),),
    # the PPOv2 / RLOO trainers' state (trl.trainer.utils 0.10 - 0.26, trl.experimental.ppo until 1.12: the 1.12.0
    # dataclass) and trl.trainer.utils.prepare_deepspeed(model, batch_size, fp16, bf16) (0.9.2 - 1.0.0, the 1.0.0 code;
    # trl.models.utils.prepare_deepspeed(model, accelerator) is another function)
    **{n: (("compat._trainer_utils", n),) for n in ("OnlineTrainerState", "prepare_deepspeed")},
    # the PPOv2 / RLOO v1 configs (0.9.2 - 0.26) and PPOv2Config's successor, the Trainer-style PPOConfig (0.12 -
    # 1.12, not the step-loop one of 0.11 and before): the fields of every release, with their defaults (the module)
    **{n: (("compat._trainer_utils", n),) for n in ("OnPolicyConfig", "PPOv2Config", "PPOConfig")},
    # the step-loop PPOConfig of 0.4 - 0.11 (0.11.4's fields, defaults and checks), under a name of its own
    "ClassicPPOConfig": (("compat._trainer_utils", "ClassicPPOConfig"),),
    # trl.trainer.utils / trl.trainer.sft_trainer 0.7.3 - 0.11.4 (removed in 0.12): the 0.11.4 function
    "neftune_post_forward_hook": (("compat._trainer_utils", "neftune_post_forward_hook"),),
    # trl.trainer.BaseTrainer (trl.trainer.base), the PPO-era trainer base, removed in 0.14: the 0.13.0 class
    "BaseTrainer": (("compat._trainer_utils", "BaseTrainer"),),
    # trl.trainer.utils, moved to trl.experimental.utils in 0.27 without label_pad_token_id: the 0.26.2 class
    "DPODataCollatorWithPadding": (("compat._trainer_utils", "DPODataCollatorWithPadding"),),
    "RewardDataCollatorWithPadding": (("compat._trainer_utils", "RewardDataCollatorWithPadding"),),
    "trl_sanitze_kwargs_for_tagging": (("compat.trl", "_trl_sanitze_kwargs_for_tagging"),),  # removed in 0.14
    # not a TRL name: transformers 5.15 removed TrainingArguments(warmup_ratio=); the keywords of the installed one
    "warmup": (("compat.trl", "_warmup"),),
    # not a TRL name: transformers 5.0 removed AutoModelForVision2Seq; 5.x's AutoModelForImageTextToText maps every
    # model type of 4.56.2's and 4.57.6's Vision2Seq table to the same class (rule auto-model-for-vision2seq)
    "AutoModelForVision2Seq": (("transformers", "AutoModelForVision2Seq"),
                               ("transformers", "AutoModelForImageTextToText")),
    # not a TRL name: transformers 5.0 moved it from modeling_utils to trainer_utils (the same function: 4.57.6 and
    # 5.24.0 differ in a docstring default and an error message); 4.56.2 has only the old path, 5.x only the new
    "load_sharded_checkpoint": (("transformers.trainer_utils", "load_sharded_checkpoint"),
                                ("transformers.modeling_utils", "load_sharded_checkpoint")),
    # not a TRL name: transformers 5.2 removed TrainingArguments(group_by_length=); the keyword of the installed one
    "length_grouping": (("compat.trl", "_length_grouping"),),
    # not a TRL name: transformers 5.15 removed TrainingArguments(logging_dir=); the keyword of the installed one
    "tensorboard_dir": (("compat.trl", "_tensorboard_dir"),),
    # not a TRL name: transformers 4.50 removed its own AdamW (not torch.optim.AdamW's update): the 4.49.0 optimizer
    "AdamW": (("compat._optim", "AdamW"),),
    # not a TRL name: peft 0.10 removed prepare_model_for_int8_training; peft 0.2's function (its keywords, its body)
    "prepare_model_for_int8_training": (("compat._peft", "prepare_model_for_int8_training"),),
    # not a TRL name: the trainer's config with the keywords TRL 0.13 took from the trainers, as 0.9 - 0.12 built it
    "trainer_config": (("compat.trl", "_trainer_config"),),
    "batched_formatting": (("compat.trl", "_batched_formatting"),),  # a TRL <= 0.15 formatting_func (a batch)
    # not a TRL name: transformers 5 ignores the text-classification pipeline's return_all_scores=; 4.x's answer
    "with_return_all_scores": (("compat.trl", "_with_return_all_scores"),),
    # not a TRL name: a Trainer subclass whose compute_loss ignores num_items_in_batch keeps 4.45's loss scaling
    "loss_kwargs_ignored": (("compat.trl", "_loss_kwargs_ignored"),),
    # removed in 0.20: the 0.19.1 classes, kept in compat._sft_data (it imports torch/transformers, so only on use)
    "DataCollatorForCompletionOnlyLM": (("compat._sft_data", "DataCollatorForCompletionOnlyLM"),),
    "ConstantLengthDataset": (("compat._sft_data", "ConstantLengthDataset"),),
    # trl.extras.dataset_formatting: the functions removed in 0.27 (0.26.2 bodies), FORMAT_MAPPING in 1.13 (1.12.0)
    **{n: (("compat._dataset_formatting", n),) for n in (
        "FORMAT_MAPPING", "conversations_formatting_function", "instructions_formatting_function",
        "get_formatting_func_from_dataset",
    )},
    # removed in 0.13 with trl.commands.cli_utils: the 0.12.2 dataclasses
    **{n: (("compat._script_args", n),) for n in ("SFTScriptArguments", "DPOScriptArguments", "RewardScriptArguments")},
    # removed in 0.9.2: the 0.8 - 0.9 dataclasses without the fields that are config fields now (see the module)
    **{n: (("compat._script_args", n),) for n in ("SftScriptArguments", "DpoScriptArguments")},
    # trl.commands.cli_utils (0.8 - 0.12), trl.scripts.chat (0.13 - 0.18): the 0.12.2 dataclass without `config`
    "ChatArguments": (("compat._script_args", "ChatArguments"),),
    # TRL 0.9 - 1.6 ModelConfig's --trust_remote_code, for parsers that no longer declare it (trl-compat's own class)
    "TrustRemoteCodeArguments": (("compat._script_args", "TrustRemoteCodeArguments"),),
    # trl.experimental.judges (0.29 - 1.0; `trl` before), removed in 1.1: the 1.0.0 classes (backends imported lazily)
    **{n: (("compat._judges", n),) for n in (
        "BaseJudge", "BaseRankJudge", "BasePairwiseJudge", "BaseBinaryJudge", "AllTrueJudge", "HfPairwiseJudge",
        "OpenAIPairwiseJudge", "PairRMJudge",
    )},
    # the diffusion trainers, removed in 0.24 with no successor: TRL's own while it has them (<= 0.23), then the
    # reference (reference_impl.diffusion, TRL 0.23.1's constructors and config fields; needs diffusers, see NEEDS)
    **{n: (("trl", n), (f"{_REF}.diffusion", n)) for n in _DIFFUSION_TOP},
    **{n: (("trl.models.auxiliary_modules", n), (f"{_REF}.diffusion", n)) for n in _DIFFUSION_AUX},
    "PerPromptStatTracker": (("trl.trainer.utils", "PerPromptStatTracker"),
                             (f"{_REF}.diffusion", "PerPromptStatTracker")),
    # the fused losses (trl.losses, 1.13 only): see compat.losses
    **{n: (("trl.losses", n), ("reference_impl.losses", n)) for n in (
        "FusedLinearDPOLoss", "FusedLinearKTOLoss", "FusedLinearGRPOLoss", "FusedLinearJSDLoss",
    )},
}

def trl_paths(name: str) -> tuple[str, ...]:
    """The TRL qualified names among `compat.trl.NAME`'s candidates (`trl.experimental.xpo.XPOTrainer`), in order:
    where the name is TRL's own; empty for trl-compat's copies of 0.x helpers."""
    return tuple(f"{m}.{a}" for m, a in TRL_CANDIDATES.get(name, ()) if m.split(".")[0] == "trl")


#: `compat.trl` names whose implementation needs a distribution beyond trl-compat's own: code the migrator points at
#: them makes the project need it too (`compat.migrate.engine.needs_of`; the `dependency-manifests` rule adds it to a
#: manifest that lacks it). The specifier is the release the reference is tested on (`reference_impl.diffusion`).
# diffusers 0.35.2 is the oldest release the reference is tested on (tests/reference_impl/test_diffusion.py passes on
# 0.35.2 and 0.42.1); unlike 0.42 (huggingface-hub>=1.32) it installs beside transformers 4.56.2 (hub < 1.0). Every
# diffusers release refuses to import beside a peft older than 0.17 (its dependency_versions_table, checked at import),
# and the LoRA of the DDPO/AlignProp pipelines (use_lora=True, the default) is peft's: peft>=0.17.0 too
NEEDS: dict[str, tuple[str, ...]] = {
    **{n: ("diffusers>=0.35.2", "peft>=0.17.0") for n in (*_DIFFUSION_TOP, *_DIFFUSION_AUX, "PerPromptStatTracker")},
}

#: `compat.losses`: TRL 1.13's fused linear losses (`trl.losses`), else `reference_impl.losses`.
LOSS_NAMES = ("FusedLinearDPOLoss", "FusedLinearKTOLoss", "FusedLinearGRPOLoss", "FusedLinearJSDLoss")

#: module -> the names `from module import NAME` may import.
EXPORTS: dict[str, frozenset[str]] = {
    "compat.trl": frozenset(TRL_CANDIDATES),
    "compat.losses": frozenset(LOSS_NAMES),
}
