"""removed-config-fields: keywords of TRL 0.x configs that no supported TRL config accepts any more, marked.

The table below lists, per config, the fields TRL 0.8 ... 1.0 had and 1.13 - 1.16 lack (TrainingArguments fields
excluded; read from the wheels with `ast`, checked against the installed TRL by the test), with the last sampled
release that still had each. Passing one is a `TypeError` on the target. None has a drop-in successor a rule could
prove (the truncation, padding and RPO machinery was rewritten). Each keyword of a config call is marked with what
to do, and dropped from the call when its value is side-effect free (a name, an attribute, a literal): passing it is
a `TypeError` on every target, so the call could not run as it was; a value that may do something is kept. The same
field set on, or read from, an object that provably holds the config (bound once to its call or to its place in a
parser's output), `config.max_prompt_length = 128` or `setattr(config, "max_prompt_length", 128)`, is marked: the
write silently does nothing on the target, the read is an AttributeError. `SFTConfig(max_seq_length=)` is a rename and belongs to `sft-max-seq-length`. The last fields went away in 1.1
(`KTOConfig.generate_during_eval`), hence this folder.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration
from migrations.kinds.bindings import config_binding
from migrations.kinds.cst import code, literal_value, replace_args, side_effect_free
from migrations.kinds.imports import imported_names

# config -> field -> last sampled TRL release that had it
REMOVED: dict[str, dict[str, str]] = {
    "SFTConfig": {"chars_per_token": "0.17.0", "dataset_batch_size": "0.17.0", "num_of_sequences": "0.17.0",
                  "use_liger": "0.17.0"},
    "DPOConfig": {"base_model_attribute_name": "0.28.0", "force_use_ref_model": "0.28.0",
                  "generate_during_eval": "0.28.0", "is_encoder_decoder": "0.14.0", "label_pad_token_id": "0.28.0",
                  "max_completion_length": "0.28.0", "max_prompt_length": "0.28.0", "max_target_length": "0.13.0",
                  "model_adapter_name": "0.28.0", "padding_value": "0.25.1", "ref_adapter_name": "0.28.0",
                  "ref_model_init_kwargs": "0.28.0", "reference_free": "0.28.0", "rpo_alpha": "0.28.0",
                  "tools": "0.28.0", "use_liger_loss": "0.27.2", "use_logits_to_keep": "0.28.0",
                  "use_num_logits_to_keep": "0.16.1"},
    "KTOConfig": {"base_model_attribute_name": "0.27.2", "generate_during_eval": "1.0.0",
                  "is_encoder_decoder": "0.26.2", "label_pad_token_id": "0.27.2", "max_completion_length": "0.26.2",
                  "max_density_ratio": "0.9.6", "max_prompt_length": "0.26.2", "min_density_ratio": "0.9.6",
                  "padding_value": "0.27.2", "prompt_sample_size": "0.9.6", "ref_model_init_kwargs": "0.27.2",
                  "truncation_mode": "0.26.2", "use_liger_loss": "0.27.2"},
    "ORPOConfig": {"label_pad_token_id": "0.27.2", "max_prompt_length": "0.27.2", "truncation_mode": "0.29.1"},
    "GRPOConfig": {"max_prompt_length": "0.27.2", "use_liger_loss": "0.27.2", "vllm_device": "0.17.0",
                   "vllm_dtype": "0.17.0", "vllm_enable_prefix_caching": "0.17.0",
                   "vllm_guided_decoding_regex": "0.27.2", "vllm_max_model_len": "0.17.0",
                   "wandb_log_unique_prompts": "0.26.2"},
    "RLOOConfig": {"max_prompt_length": "0.28.0"},
    "CPOConfig": {"label_pad_token_id": "0.27.2", "max_prompt_length": "0.27.2", "max_target_length": "0.10.1",
                  "padding_value": "0.27.2", "truncation_mode": "0.29.1"},
}
_HINTS = {
    "max_prompt_length": "truncation is on max_length (prompt+completion) now",
    "max_completion_length": "truncation is on max_length (prompt+completion) now",
    "max_target_length": "truncation is on max_length now",
    "truncation_mode": "truncation is on max_length now",
    "label_pad_token_id": "labels are padded internally",
    "padding_value": "padding uses processing_class.pad_token",
    "is_encoder_decoder": "read from the model",
    "rpo_alpha": 'use loss_type=["sigmoid", "sft"], loss_weights=[1.0, alpha]',
    "use_liger": "use use_liger_kernel=",
    "use_liger_loss": "use use_liger_kernel=",
    "ref_model_init_kwargs": "build ref_model yourself",
    "generate_during_eval": "log samples with a callback",
    "vllm_guided_decoding_regex": "its successor is vllm_structured_outputs_regex",
    "vllm_max_model_len": "its successor is vllm_max_model_length",
    "vllm_device": "vLLM runs as a server (vllm_mode=) now",
    "vllm_dtype": "vLLM runs as a server (vllm_mode=) now",
    "vllm_enable_prefix_caching": "vLLM runs as a server (vllm_mode=) now",
    "wandb_log_unique_prompts": "log_completions= logs prompts",
    # TRL 1.13 - 1.16's DPOTrainer, given a PeftModel and no ref_model, trains the adapter named "default" and copies
    # it into a frozen "ref" one (`model.peft_config["default"]`: a KeyError for a model without one)
    "model_adapter_name": "load the trainable adapter as adapter_name='default' (DPOTrainer copies it into its frozen "
                          "'ref' adapter itself; another name is a KeyError: 'default')",
    "ref_adapter_name": "drop the separately loaded reference adapter: DPOTrainer copies the 'default' adapter into a "
                        "frozen 'ref' one itself",
}
# GRPO/RLOO prompts are not truncated at all any more (there is only a completion length)
_HINTS_BY_CONFIG = {("GRPOConfig", "max_prompt_length"): "prompts are not truncated now: shorten them in the data",
                    ("RLOOConfig", "max_prompt_length"): "prompts are not truncated now: shorten them in the data"}
_FIELDS = frozenset(f for fields in REMOVED.values() for f in fields)
_STEM = {"SFTConfig": ("sft_config", ""), "DPOConfig": ("dpo_config", ""), "GRPOConfig": ("grpo_config", ""),
         "RLOOConfig": ("rloo_config", ""), "KTOConfig": ("kto_config", "kto"),
         "ORPOConfig": ("orpo_config", "orpo"), "CPOConfig": ("cpo_config", "cpo")}
_PATHS: dict[str, str] = {}
for _name, (_stem, _pkg) in _STEM.items():
    for _p in (f"trl.{_name}", f"trl.trainer.{_name}", f"trl.trainer.{_stem}.{_name}", f"compat.trl.{_name}"):
        _PATHS[_p] = _name
    if _pkg:
        _PATHS[f"trl.experimental.{_pkg}.{_name}"] = _PATHS[f"trl.experimental.{_pkg}.{_stem}.{_name}"] = _name


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def _config_of(self, value: cst.BaseExpression) -> str | None:
        """The TRL config whose instance `value` (a name) provably holds: bound once to a call of it, or to its
        position in a parser's output (`kinds.bindings.config_binding`); None otherwise."""
        binding = config_binding(self, value, lambda n: imported_names(self, n))
        if binding is None:
            return None
        return next((_PATHS[n] for n in sorted(imported_names(self, binding.cls)) if n in _PATHS), None)

    def _attribute_use(self, node: cst.CSTNode, owner: cst.BaseExpression, field: str, write: bool) -> None:
        """`owner.field` written (an assignment, `setattr`) or read, where `owner` holds a config lacking `field`:
        on TRL 1.13+ the write sets an attribute no code reads (the option silently does nothing: biosharp18/
        CS245-project's `setattr(config, "max_prompt_length", 128)`, HollyRiver/HFRL's
        `training_args.model_adapter_name = "policy"`), the read is an AttributeError."""
        config = self._config_of(owner)
        if config is None or field not in REMOVED[config]:
            return
        hint = _HINTS_BY_CONFIG.get((config, field)) or _HINTS.get(field)
        last = f"last in TRL {REMOVED[config][field]}"
        what = ("sets an attribute no TRL 1.13+ code reads (the option does nothing now)" if write
                else "is an AttributeError on TRL 1.13+")
        self.todo(node, f"{code(owner)}.{field}: {config} has no `{field}` field ({last}): this {what}"
                  + (f"; {hint}" if hint else ""))

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        for target in original_node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and t.attr.value in _FIELDS:
                self._attribute_use(original_node, t.value, t.attr.value, True)
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        if original_node.attr.value in _FIELDS:
            parent = self.get_metadata(ParentNodeProvider, original_node, None)
            if not (isinstance(parent, cst.AssignTarget) and parent.target is original_node):
                self._attribute_use(original_node, original_node.value, original_node.attr.value, False)
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = imported_names(self, original_node.func)  # none for a node the rule built: left as is
        config = next((_PATHS[n] for n in sorted(names) if n in _PATHS), None)
        f = original_node.func
        if config is None and isinstance(f, cst.Name) and f.value == "setattr" and len(original_node.args) == 3:
            field = literal_value(original_node.args[1].value, None)
            if isinstance(field, str) and field in _FIELDS:
                self._attribute_use(original_node, original_node.args[0].value, field, True)
        if config is None:
            return updated_node
        dropped: set[str] = set()
        for arg in original_node.args:
            field = arg.keyword.value if arg.keyword is not None else None
            if field in REMOVED[config]:
                hint = _HINTS_BY_CONFIG.get((config, field)) or _HINTS.get(field)
                last = f"last in TRL {REMOVED[config][field]}"  # the table holds the last release that had it
                if side_effect_free(arg.value):
                    # a TypeError on the target; its value does nothing but produce a value: dropped, and marked
                    dropped.add(field)
                    done = f"{config}({field}=) dropped" + (f": {hint}" if hint else "")
                    self.todo(original_node, f"{done} (it was {code(arg.value)}; {last})")
                else:
                    self.todo(original_node, f"{config}({field}=) is gone ({last}): {hint or 'drop it'}")
        if not dropped:
            return updated_node
        keep = [a for a in updated_node.args if a.keyword is None or a.keyword.value not in dropped]
        return replace_args(updated_node, keep)


class RemovedConfigFields(PythonMigration):
    summary = "TRL 0.x config keywords no 1.13+ config accepts (max_prompt_length=, padding_value=, ...): dropped, marked"
    triggers = tuple(sorted({f for fields in REMOVED.values() for f in fields}))
    requires = ("trl",)
    transformer = _Transformer


MIGRATION = RemovedConfigFields()
