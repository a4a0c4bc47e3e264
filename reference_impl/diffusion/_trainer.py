"""What the DDPO and AlignProp trainers share (TRL 0.23.1 repeated it in both): the accelerate set-up, the frozen
parts cast to the inference dtype, the optimizer, checkpoint resume and hooks, prompt encoding, the epoch loop."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import torch
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration, set_seed
from huggingface_hub import PyTorchModelHubMixin

from .pipeline import DDPOStableDiffusionPipeline

logger = logging.getLogger(__name__)

_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def flatten_dict(nested: dict[str, Any], sep: str = "/") -> dict[str, Any]:
    """`{"a": {"b": 1}} -> {"a/b": 1}`: a config as tracker hyper-parameters."""
    out: dict[str, Any] = {}
    for key, value in nested.items():
        if isinstance(value, dict):
            out.update({f"{key}{sep}{k}": v for k, v in flatten_dict(value, sep).items()})
        else:
            out[key] = value
    return out


def _latest_checkpoint(resume_from: str, project: ProjectConfiguration) -> str:
    """`resume_from` itself when it names a `checkpoint_N` folder, else its newest `checkpoint_N` (and the project
    counts on from N + 1)."""
    resume_from = os.path.normpath(os.path.expanduser(resume_from))
    if "checkpoint_" in os.path.basename(resume_from):
        return resume_from
    numbers = sorted(int(x.split("_")[-1]) for x in os.listdir(resume_from) if "checkpoint_" in x)
    if not numbers:
        raise ValueError(f"No checkpoints found in {resume_from}")
    project.iteration = numbers[-1] + 1
    return os.path.join(resume_from, f"checkpoint_{numbers[-1]}")


class DiffusionTrainer(PyTorchModelHubMixin):
    """The common constructor of `DDPOTrainer` and `AlignPropTrainer` (TRL 0.23.1's arguments)."""

    _tag_names = ["trl"]
    _tracker_key = "trainer_config"

    def __init__(
        self,
        config: Any,
        reward_function: Callable[..., Any],
        prompt_function: Callable[[], tuple[str, Any]],
        sd_pipeline: DDPOStableDiffusionPipeline,
        image_samples_hook: Callable[[Any, Any, Any], Any] | None = None,
    ):
        if image_samples_hook is None:
            logger.warning("No image_samples_hook provided; no images will be logged")
        self.prompt_fn = prompt_function
        self.reward_fn = reward_function
        self.config = config
        self.image_samples_callback = image_samples_hook

        project = ProjectConfiguration(**config.project_kwargs)
        if config.resume_from:
            config.resume_from = _latest_checkpoint(config.resume_from, project)
        self.accelerator = Accelerator(
            log_with=config.log_with, mixed_precision=config.mixed_precision, project_config=project,
            gradient_accumulation_steps=self._accumulation_steps(), **config.accelerator_kwargs)
        problem = self._config_problem()
        if problem:
            raise ValueError(problem)
        if self.accelerator.is_main_process:
            hparams = config.to_dict()
            self.accelerator.init_trackers(
                config.tracker_project_name,
                config=hparams if config.log_with == "tensorboard" else {self._tracker_key: hparams},
                init_kwargs=config.tracker_kwargs)
        logger.info(f"\n{config}")
        set_seed(config.seed, device_specific=True)

        self.sd_pipeline = sd_pipeline
        sd_pipeline.set_progress_bar_config(position=1, disable=not self.accelerator.is_local_main_process,
                                            leave=False, desc="Timestep", dynamic_ncols=True)
        # the frozen parts only run inference: keep them in the mixed-precision dtype
        dtype = _DTYPES.get(self.accelerator.mixed_precision, torch.float32)
        for module in (sd_pipeline.vae, sd_pipeline.text_encoder, sd_pipeline.unet):
            module.to(self.accelerator.device, dtype=dtype)
        trainable = sd_pipeline.get_trainable_layers()
        self.accelerator.register_save_state_pre_hook(self._save_model_hook)
        self.accelerator.register_load_state_pre_hook(self._load_model_hook)
        if config.allow_tf32 and torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = True
        self.optimizer = self._setup_optimizer(trainable if isinstance(trainable, list) else trainable.parameters())
        self.neg_prompt_embed = self._encode([""] if config.negative_prompts is None else config.negative_prompts)[1]
        # LoRA trains without autocast (see the pipeline's `autocast`); full fine-tuning with the accelerator's
        self.autocast = sd_pipeline.autocast or self.accelerator.autocast
        self._setup_extras()
        if getattr(sd_pipeline, "use_lora", False):
            unet, self.optimizer = self.accelerator.prepare(trainable, self.optimizer)
            self.trainable_layers = [p for p in unet.parameters() if p.requires_grad]
        else:
            self.trainable_layers, self.optimizer = self.accelerator.prepare(trainable, self.optimizer)
        if config.resume_from:
            logger.info(f"Resuming from {config.resume_from}")
            self.accelerator.load_state(config.resume_from)
            self.first_epoch = int(config.resume_from.split("_")[-1]) + 1
        else:
            self.first_epoch = 0

    # -- hooks for the subclasses --------------------------------------------------------------------------------
    def _accumulation_steps(self) -> int:
        return self.config.train_gradient_accumulation_steps

    def _config_problem(self) -> str:
        """Why the config cannot train (empty when it can)."""
        return ""

    def _setup_extras(self) -> None:
        """Anything more the trainer needs before `accelerator.prepare`."""

    def step(self, epoch: int, global_step: int) -> int:
        raise NotImplementedError

    # -- shared --------------------------------------------------------------------------------------------------
    def _encode(self, prompts: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """`(token ids, text-encoder hidden states)` of `prompts`, padded to the tokenizer's maximum length."""
        tokenizer = self.sd_pipeline.tokenizer
        ids = tokenizer(prompts, return_tensors="pt", padding="max_length", truncation=True,
                        max_length=tokenizer.model_max_length).input_ids.to(self.accelerator.device)
        return ids, self.sd_pipeline.text_encoder(ids)[0]

    def _trained_parameters(self) -> Any:
        layers = self.trainable_layers
        return layers if isinstance(layers, list) else layers.parameters()

    def _optimizer_step(self, loss: torch.Tensor) -> None:
        """Backward, clip the gradient norm on the step that syncs, step (accelerate skips it while accumulating)."""
        self.accelerator.backward(loss)
        if self.accelerator.sync_gradients:
            self.accelerator.clip_grad_norm_(self._trained_parameters(), self.config.train_max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def _setup_optimizer(self, trainable_layers_parameters: Any) -> torch.optim.Optimizer:
        if self.config.train_use_8bit_adam:
            import bitsandbytes

            optimizer_cls = bitsandbytes.optim.AdamW8bit
        else:
            optimizer_cls = torch.optim.AdamW
        return optimizer_cls(trainable_layers_parameters, lr=self.config.train_learning_rate,
                             betas=(self.config.train_adam_beta1, self.config.train_adam_beta2),
                             weight_decay=self.config.train_adam_weight_decay, eps=self.config.train_adam_epsilon)

    def _save_model_hook(self, models: list[Any], weights: list[Any], output_dir: str) -> None:
        self.sd_pipeline.save_checkpoint(models, weights, output_dir)
        weights.pop()  # the pipeline saved the model: accelerate must not save it again

    def _load_model_hook(self, models: list[Any], input_dir: str) -> None:
        self.sd_pipeline.load_checkpoint(models, input_dir)
        models.pop()  # likewise for loading

    def _maybe_save_state(self, epoch: int) -> None:
        if epoch != 0 and epoch % self.config.save_freq == 0 and self.accelerator.is_main_process:
            self.accelerator.save_state()

    def train(self, epochs: int | None = None) -> None:
        """Train for `epochs` (default `config.num_epochs`), from the resumed epoch on."""
        global_step = 0
        for epoch in range(self.first_epoch, self.config.num_epochs if epochs is None else epochs):
            global_step = self.step(epoch, global_step)

    def _save_pretrained(self, save_directory: str) -> None:
        """`save_pretrained` / `push_to_hub` (huggingface_hub's mixin): the pipeline, with its LoRA weights."""
        self.sd_pipeline.save_pretrained(save_directory)
