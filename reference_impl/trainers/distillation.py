"""On-policy distillation (GKD / generalised JSD): `DistillationTrainer` and `DistillationConfig`, drop-in for
TRL 1.16's.

Each step the student samples completions for prompt-only data; the loss is the token-level generalised JSD between
student and teacher next-token distributions on those completions (`beta=0` forward KL, `beta=1` reverse KL),
`reference_impl.losses.distillation.distillation_loss` over `chunking.chunked_divergence`: both models run their
backbones only, the two heads are applied chunk by chunk inside the student's forward, so neither `[B,T,V]` logits
tensor exists. Normalised by the number of completion tokens of the generation batch, like TRL. Logged metrics:
`entropy` (student), `completions/*`, `num_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from reference_impl.losses.distillation import distillation_loss

from . import _model
from ._base import _coerce_args
from ._config import option, unsupported
from ._online import _GroupedOnlineTrainer, check_generation_fields
from .grpo import _GroupedConfig


@dataclass
class DistillationConfig(_GroupedConfig):
    """TRL 1.16 `DistillationConfig` fields."""

    _min_generations: ClassVar[int] = 1

    teacher_model_name_or_path: str | None = option(None, "Teacher model id or path (when `teacher_model` is None).")
    teacher_model_revision: str | None = option(None, "Teacher revision.")
    teacher_model_init_kwargs: dict | str | None = option(None, "from_pretrained kwargs of the teacher.")
    beta: float = option(1.0, "0: forward KL, 1: reverse KL, otherwise generalised JSD.")
    max_tool_calling_iterations: int | None = unsupported(None, "tool calling")
    num_generations: int = option(1, "Fixed to 1 (one on-policy completion per prompt).")
    num_generations_eval: int | None = option(None, "Fixed to 1.")

    def __post_init__(self) -> None:
        import json

        if isinstance(self.teacher_model_init_kwargs, str):
            self.teacher_model_init_kwargs = json.loads(self.teacher_model_init_kwargs)
        self.num_generations = 1
        super().__post_init__()
        self.num_generations_eval = 1
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"beta must be in [0.0, 1.0], got {self.beta}.")
        check_generation_fields(self)


class DistillationTrainer(_GroupedOnlineTrainer):
    """On-policy distillation on the chunked engine. Same constructor as TRL 1.16's `DistillationTrainer`."""

    _name = "Distillation"
    _tag_names = ["distillation"]
    loss_is_scaled_for_ga = True

    def __init__(
        self,
        model: Any,
        teacher_model: Any = None,
        args: DistillationConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        quantization_config: Any = None,
        peft_config: Any = None,
        tools: list | None = None,
    ) -> None:
        from transformers import set_seed

        args = _coerce_args(args, DistillationConfig, model, "Distillation")
        if tools:
            raise ValueError("`tools` are not supported by reference_impl's DistillationTrainer.")
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if quantization_config is not None:
            args.model_init_kwargs = {**(args.model_init_kwargs or {}), "quantization_config": quantization_config}
        set_seed(args.seed)
        teacher_model = teacher_model if teacher_model is not None else args.teacher_model_name_or_path
        if teacher_model is None:
            raise ValueError("Pass `teacher_model` or set `teacher_model_name_or_path`.")
        if isinstance(teacher_model, str):
            from transformers import AutoModelForCausalLM

            kwargs = dict(args.teacher_model_init_kwargs or {})
            if args.teacher_model_revision:
                kwargs["revision"] = args.teacher_model_revision
            teacher_model = AutoModelForCausalLM.from_pretrained(teacher_model, **kwargs)
        model = self._prepare_model(model, args, peft_config)
        processing_class = self._prepare_processing_class(processing_class, model, args, padding_side="left")
        tokenizer = getattr(processing_class, "tokenizer", processing_class)
        _model.add_engine_head(_model.causal_lm(teacher_model))
        teacher_model.requires_grad_(False)
        self.num_generations = self.num_generations_eval = 1
        self.num_iterations = 1
        self.beta = args.beta
        self._step = 0
        self._buffered_inputs: list | None = None
        super().__init__(model=model, args=args, data_collator=lambda features: features,
                         train_dataset=train_dataset, eval_dataset=eval_dataset, processing_class=processing_class,
                         callbacks=callbacks, optimizers=optimizers)
        self._setup_online(model, tokenizer, args, max_new_tokens=args.max_completion_length,
                           temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
                           repetition_penalty=args.repetition_penalty)
        self.teacher_model = _model.prepare_frozen_model(self.accelerator, teacher_model.eval())

    def _generate_and_score(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        prompts = [x["prompt"] for x in inputs]
        prompt_ids = self._tokenize_prompts(prompts)
        completion_ids, _ = self._generate_completions(prompt_ids)
        self._log_completion_lengths(prompt_ids, completion_ids)
        batch = self._pad_completions(prompt_ids, completion_ids)
        batch["num_items_in_batch"] = self.accelerator.gather(batch["completion_mask"].sum()).sum()
        return batch

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        mode = self._mode
        if self.model.training:
            num_items_in_batch = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes
        else:
            num_items_in_batch = None
        input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
        attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
        keep = inputs["completion_ids"].size(1)
        mask = inputs["completion_mask"]

        def completion_hidden(hidden: torch.Tensor) -> torch.Tensor:
            return hidden[:, :-1][:, -keep:]

        with torch.no_grad():
            t_hidden, t_weight, t_bias = self.teacher_model(
                input_ids=input_ids, attention_mask=attention_mask,
                engine_fn=lambda h, w, b: (completion_hidden(h), w, b))
        t_scale, t_softcap = _model.head_scaling(_model.causal_lm(self.teacher_model).config)
        s_scale, s_softcap = _model.head_scaling(_model.causal_lm(model).config)

        def student_loss(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> dict:
            loss, metrics = distillation_loss(
                completion_hidden(hidden), weight, t_hidden, t_weight, mask, beta=self.beta,
                temperature=self.temperature, num_items_in_batch=num_items_in_batch, student_bias=bias,
                teacher_bias=t_bias, student_logit_scale=s_scale, teacher_logit_scale=t_scale,
                student_softcap=s_softcap, teacher_softcap=t_softcap,
            )
            return {"loss": loss, **metrics}

        out = model(input_ids=input_ids, attention_mask=attention_mask, engine_fn=student_loss)
        n_valid = self.accelerator.gather_for_metrics(out["num_tokens"].reshape(1)).sum()
        entropy_sum = self.accelerator.gather_for_metrics((out["entropy"] * out["num_tokens"]).reshape(1)).sum()
        self._metrics[mode]["entropy"].append((entropy_sum / n_valid).item() if n_valid > 0 else 0.0)
        return (out["loss"], None) if return_outputs else out["loss"]
