"""AlignProp: aligning text-to-image diffusion models with reward backpropagation (Prabhudesai et al. 2023,
https://arxiv.org/abs/2310.03739), with TRL 0.23.1's `AlignPropConfig` / `AlignPropTrainer` interface.

No policy gradient: the reward model is differentiable, so the sampling chain itself is differentiated. One step
(`AlignPropTrainer.step`), `train_gradient_accumulation_steps` times:

1. sample `train_batch_size` images with the graph kept to the (LoRA) UNet weights (`pipeline_step_with_grad`);
   truncated backprop detaches the early steps (fixed at `truncated_backprop_timestep`, or randomised within
   `truncated_rand_backprop_minmax`), and gradient checkpointing recomputes each UNet call in the backward pass;
2. `loss = 10 - mean(reward)` (TRL's loss, written for the aesthetic score, whose range is about 0-10: the constant
   only shifts the loss), backward through the decoder and the chain, clip, step.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ._trainer import DiffusionTrainer, flatten_dict
from .ddpo import EXP_NAME, _check_8bit_adam, _f
from .pipeline import DDPOStableDiffusionPipeline

#: TRL's constant: the loss is `REWARD_OFFSET - mean(reward)`
REWARD_OFFSET = 10.0


@dataclass
class AlignPropConfig:
    """TRL 0.23.1's `AlignPropConfig`: the same fields, order and defaults (`HfArgumentParser` accepts the same
    flags)."""

    exp_name: str = _f(EXP_NAME, "Name of this experiment (defaults to the file name without the extension).")
    run_name: str = _f("", "Name of this run.")
    seed: int = _f(0, "Random seed for reproducibility.")
    log_with: str | None = _f(None, "Log with either 'wandb' or 'tensorboard'.", choices=["wandb", "tensorboard"])
    log_image_freq: int = _f(1, "Frequency for logging images.")
    tracker_kwargs: dict[str, Any] = _f({}, "Keyword arguments for the tracker (e.g., `wandb_project`).")
    accelerator_kwargs: dict[str, Any] = _f({}, "Keyword arguments for the accelerator.")
    project_kwargs: dict[str, Any] = _f({}, "Keyword arguments for the accelerator project config (e.g., "
                                            "`logging_dir`).")
    tracker_project_name: str = _f("trl", "Name of project to use for tracking.")
    logdir: str = _f("logs", "Top-level logging directory for checkpoint saving.")
    num_epochs: int = _f(100, "Number of epochs to train.")
    save_freq: int = _f(1, "Number of epochs between saving model checkpoints.")
    num_checkpoint_limit: int = _f(5, "Number of checkpoints to keep before overwriting old ones.")
    mixed_precision: str = _f("fp16", "Mixed precision training. Possible values are 'fp16', 'bf16', 'none'.",
                              choices=["fp16", "bf16", "none"])
    allow_tf32: bool = _f(True, "Allow `tf32` on Ampere GPUs.")
    resume_from: str = _f("", "Path to resume training from a checkpoint.")
    sample_num_steps: int = _f(50, "Number of sampler inference steps.")
    sample_eta: float = _f(1.0, "Eta parameter for the DDIM sampler.")
    sample_guidance_scale: float = _f(5.0, "Classifier-free guidance weight.")
    train_batch_size: int = _f(1, "Batch size for training.")
    train_use_8bit_adam: bool = _f(False, "Whether to use the 8bit Adam optimizer from `bitsandbytes`.")
    train_learning_rate: float = _f(1e-3, "Learning rate.")
    train_adam_beta1: float = _f(0.9, "Beta1 for Adam optimizer.")
    train_adam_beta2: float = _f(0.999, "Beta2 for Adam optimizer.")
    train_adam_weight_decay: float = _f(1e-4, "Weight decay for Adam optimizer.")
    train_adam_epsilon: float = _f(1e-8, "Epsilon value for Adam optimizer.")
    train_gradient_accumulation_steps: int = _f(1, "Number of gradient accumulation steps.")
    train_max_grad_norm: float = _f(1.0, "Maximum gradient norm for gradient clipping.")
    negative_prompts: str | None = _f(None, "Comma-separated list of prompts to use as negative examples.")
    truncated_backprop_rand: bool = _f(True, "If `True`, randomized truncation to different diffusion timesteps is "
                                             "used.")
    truncated_backprop_timestep: int = _f(49, "Absolute timestep to which the gradients are backpropagated. Used "
                                              "only if `truncated_backprop_rand=False`.")
    truncated_rand_backprop_minmax: tuple[int, int] = _f((0, 50), "Range of diffusion timesteps for randomized "
                                                                  "truncated backpropagation.")
    push_to_hub: bool = _f(False, "Whether to push the final model to the Hub.")

    def to_dict(self) -> dict[str, Any]:
        return flatten_dict(dict(self.__dict__))

    def __post_init__(self) -> None:
        _check_8bit_adam(self)


class AlignPropTrainer(DiffusionTrainer):
    """AlignProp on a `DDPOStableDiffusionPipeline` that has `rgb_with_grad`; TRL 0.23.1's constructor.

    `reward_function(images, prompts, prompt_metadata) -> (rewards, reward_metadata)` must be differentiable in
    `images`; `image_samples_hook(prompt_image_pairs, global_step, tracker)` gets the last batch's
    `{"images", "prompts", "prompt_metadata", "rewards"}` every `log_image_freq` steps.
    """

    _tag_names = ["trl", "alignprop"]
    _tracker_key = "alignprop_trainer_config"

    def __init__(
        self,
        config: AlignPropConfig,
        reward_function: Callable[[torch.Tensor, tuple[str], tuple[Any]], torch.Tensor],
        prompt_function: Callable[[], tuple[str, Any]],
        sd_pipeline: DDPOStableDiffusionPipeline,
        image_samples_hook: Callable[[Any, Any, Any], Any] | None = None,
    ):
        super().__init__(config, reward_function, prompt_function, sd_pipeline, image_samples_hook)

    def compute_rewards(self, prompt_image_pairs: dict[str, Any]) -> torch.Tensor:
        reward, _metadata = self.reward_fn(prompt_image_pairs["images"], prompt_image_pairs["prompts"],
                                           prompt_image_pairs["prompt_metadata"])
        return reward

    def calculate_loss(self, rewards: torch.Tensor) -> torch.Tensor:
        """`10 - mean(rewards)`: maximise the (differentiable) reward."""
        return REWARD_OFFSET - rewards.mean()

    def step(self, epoch: int, global_step: int) -> int:
        """One optimizer step over `train_gradient_accumulation_steps` differentiable samplings; returns the updated
        `global_step`."""
        info: dict[str, list[float]] = defaultdict(list)
        accelerator = self.accelerator
        self.sd_pipeline.unet.train()
        for _ in range(self.config.train_gradient_accumulation_steps):
            with accelerator.accumulate(self.sd_pipeline.unet), self.autocast(), torch.enable_grad():
                prompt_image_pairs = self._generate_samples(batch_size=self.config.train_batch_size)
                rewards = self.compute_rewards(prompt_image_pairs)
                prompt_image_pairs["rewards"] = rewards
                gathered = accelerator.gather(rewards).detach().cpu().numpy()
                loss = self.calculate_loss(rewards)
                self._optimizer_step(loss)
            info["reward_mean"].append(gathered.mean())
            info["reward_std"].append(gathered.std())
            info["loss"].append(loss.item())
        if not accelerator.sync_gradients:
            raise ValueError("no optimizer step after train_gradient_accumulation_steps samplings: check the "
                             "gradient accumulation settings")
        logged = accelerator.reduce({k: torch.mean(torch.tensor(v)) for k, v in info.items()}, reduction="mean")
        logged.update({"epoch": epoch})
        accelerator.log(logged, step=global_step)
        global_step += 1
        if self.image_samples_callback is not None and global_step % self.config.log_image_freq == 0:
            self.image_samples_callback(prompt_image_pairs, global_step, accelerator.trackers[0])
        self._maybe_save_state(epoch)
        return global_step

    def _generate_samples(self, batch_size: int, with_grad: bool = True, prompts: list[str] | None = None
                          ) -> dict[str, Any]:
        """`{"images", "prompts", "prompt_metadata"}` of one sampled batch; with `with_grad` the images keep their
        graph (truncated as the config says), else plain sampling."""
        if prompts is None:
            prompts, prompt_metadata = zip(*[self.prompt_fn() for _ in range(batch_size)])
        else:
            prompt_metadata = [{} for _ in range(batch_size)]
        _ids, prompt_embeds = self._encode(list(prompts))
        c = self.config
        common = {"prompt_embeds": prompt_embeds,
                  "negative_prompt_embeds": self.neg_prompt_embed.repeat(batch_size, 1, 1),
                  "num_inference_steps": c.sample_num_steps, "guidance_scale": c.sample_guidance_scale,
                  "eta": c.sample_eta, "output_type": "pt"}
        if with_grad:
            out = self.sd_pipeline.rgb_with_grad(
                truncated_backprop_rand=c.truncated_backprop_rand,
                truncated_backprop_timestep=c.truncated_backprop_timestep,
                truncated_rand_backprop_minmax=c.truncated_rand_backprop_minmax, **common)
        else:
            out = self.sd_pipeline(**common)
        return {"images": out.images, "prompts": prompts, "prompt_metadata": prompt_metadata}
