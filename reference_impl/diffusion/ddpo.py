"""DDPO: denoising diffusion policy optimisation (Black et al. 2023, "Training Diffusion Models with Reinforcement
Learning", https://arxiv.org/abs/2305.13301), with TRL 0.23.1's `DDPOConfig` / `DDPOTrainer` interface.

The denoising chain is an MDP: state `(c, t, x_t)`, action `x_{t-1}`, policy `p_theta(x_{t-1} | x_t, c)` (one DDIM
step, a Gaussian: `ddim.py`), reward `r(x_0, c)` only at the end. One epoch (`DDPOTrainer.step`):

1. sample `sample_num_batches_per_epoch x sample_batch_size` images, keeping every latent and `log p_old` per step;
2. reward them; advantages `A = (r - mean) / std`, over the whole batch or per prompt (`PerPromptStatTracker`:
   a running buffer per prompt, sec. 5);
3. for `train_num_inner_epochs`, over shuffled samples and (independently per sample) shuffled timesteps, take the
   first `train_timestep_fraction` of the steps and minimise PPO's clipped surrogate (DDPO_IS, eq. 4 with clipping)

       L = mean_t max(-A * rho_t, -A * clip(rho_t, 1 - eps, 1 + eps)),   rho_t = exp(log p_theta - log p_old)

   with `A` clipped to `[-train_adv_clip_max, train_adv_clip_max]`; gradients accumulate over the timesteps of a
   sample (`train_gradient_accumulation_steps` counts samples, so the accelerator accumulates that times the steps).
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from transformers import is_bitsandbytes_available

from reference_impl.losses.policy import clipped_surrogate

from ._trainer import DiffusionTrainer, flatten_dict
from .pipeline import DDPOStableDiffusionPipeline


def _f(default: Any, help: str, **metadata: Any) -> Any:
    """A config field with its `--help` text (`default_factory` for a dict default)."""
    if isinstance(default, dict):
        return field(default_factory=dict, metadata={"help": help, **metadata})
    return field(default=default, metadata={"help": help, **metadata})


#: the default experiment name: the running script's file name without `.py` (TRL's expression, kept as is)
EXP_NAME = os.path.basename(sys.argv[0])[: -len(".py")]


@dataclass
class DDPOConfig:
    """TRL 0.23.1's `DDPOConfig`: the same fields, order and defaults (`HfArgumentParser` accepts the same flags)."""

    exp_name: str = _f(EXP_NAME, "Name of this experiment (by default is the file name without the extension name).")
    run_name: str = _f("", "Name of this run.")
    seed: int = _f(0, "Random seed.")
    log_with: str | None = _f(None, "Log with either 'wandb' or 'tensorboard'.", choices=["wandb", "tensorboard"])
    tracker_kwargs: dict = _f({}, "Keyword arguments for the tracker (e.g. wandb_project).")
    accelerator_kwargs: dict = _f({}, "Keyword arguments for the accelerator.")
    project_kwargs: dict = _f({}, "Keyword arguments for the accelerator project config (e.g. `logging_dir`).")
    tracker_project_name: str = _f("trl", "Name of project to use for tracking.")
    logdir: str = _f("logs", "Top-level logging directory for checkpoint saving.")
    num_epochs: int = _f(100, "Number of epochs to train.")
    save_freq: int = _f(1, "Number of epochs between saving model checkpoints.")
    num_checkpoint_limit: int = _f(5, "Number of checkpoints to keep before overwriting old ones.")
    mixed_precision: str = _f("fp16", "Mixed precision training.")
    allow_tf32: bool = _f(True, "Allow `tf32` on Ampere GPUs.")
    resume_from: str = _f("", "Resume training from a checkpoint.")
    sample_num_steps: int = _f(50, "Number of sampler inference steps.")
    sample_eta: float = _f(1.0, "Eta parameter for the DDIM sampler.")
    sample_guidance_scale: float = _f(5.0, "Classifier-free guidance weight.")
    sample_batch_size: int = _f(1, "Batch size (per GPU) to use for sampling.")
    sample_num_batches_per_epoch: int = _f(2, "Number of batches to sample per epoch.")
    train_batch_size: int = _f(1, "Batch size (per GPU) to use for training.")
    train_use_8bit_adam: bool = _f(False, "Use 8bit Adam optimizer from bitsandbytes.")
    train_learning_rate: float = _f(3e-4, "Learning rate.")
    train_adam_beta1: float = _f(0.9, "Adam beta1.")
    train_adam_beta2: float = _f(0.999, "Adam beta2.")
    train_adam_weight_decay: float = _f(1e-4, "Adam weight decay.")
    train_adam_epsilon: float = _f(1e-8, "Adam epsilon.")
    train_gradient_accumulation_steps: int = _f(1, "Number of gradient accumulation steps.")
    train_max_grad_norm: float = _f(1.0, "Maximum gradient norm for gradient clipping.")
    train_num_inner_epochs: int = _f(1, "Number of inner epochs per outer epoch.")
    train_cfg: bool = _f(True, "Whether to use classifier-free guidance during training.")
    train_adv_clip_max: float = _f(5.0, "Clip advantages to the range.")
    train_clip_range: float = _f(1e-4, "PPO clip range.")
    train_timestep_fraction: float = _f(1.0, "Fraction of timesteps to train on.")
    per_prompt_stat_tracking: bool = _f(False, "Whether to track statistics for each prompt separately.")
    per_prompt_stat_tracking_buffer_size: int = _f(16, "Number of reward values to store in the buffer for each "
                                                       "prompt.")
    per_prompt_stat_tracking_min_count: int = _f(16, "Minimum number of reward values to store in the buffer.")
    async_reward_computation: bool = _f(False, "Whether to compute rewards asynchronously.")
    max_workers: int = _f(2, "Maximum number of workers to use for async reward computation.")
    negative_prompts: str = _f("", "Comma-separated list of prompts to use as negative examples.")
    push_to_hub: bool = _f(False, "Whether to push the final model checkpoint to the Hub.")

    def to_dict(self) -> dict[str, Any]:
        return flatten_dict(dict(self.__dict__))

    def __post_init__(self) -> None:
        _check_8bit_adam(self)


def _check_8bit_adam(config: Any) -> None:
    if config.train_use_8bit_adam and not is_bitsandbytes_available():
        raise ImportError("train_use_8bit_adam=True needs bitsandbytes: pip install bitsandbytes")


class PerPromptStatTracker:
    """Advantages normalised per prompt (DDPO sec. 5): each prompt keeps its last `buffer_size` rewards; once it has
    `min_count` of them its rewards are standardised with that buffer's mean and std, before that with the batch's."""

    def __init__(self, buffer_size: int, min_count: int):
        self.buffer_size = buffer_size
        self.min_count = min_count
        self.stats: dict[str, deque] = {}

    def update(self, prompts: Iterable[str], rewards: Iterable[float]) -> np.ndarray:
        prompts, rewards = np.array(prompts), np.array(rewards)
        advantages = np.empty_like(rewards)
        for prompt in np.unique(prompts):
            mine = rewards[prompts == prompt]
            buffer = self.stats.setdefault(prompt, deque(maxlen=self.buffer_size))
            buffer.extend(mine)
            reference = buffer if len(buffer) >= self.min_count else rewards
            advantages[prompts == prompt] = (mine - np.mean(reference)) / (np.std(reference) + 1e-6)
        return advantages

    def get_stats(self) -> dict[str, dict[str, float]]:
        return {k: {"mean": np.mean(v), "std": np.std(v), "count": len(v)} for k, v in self.stats.items()}


def ddpo_loss(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantages: torch.Tensor,
    clip_range: float,
    adv_clip_max: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The clipped DDPO objective of one denoising step for a batch, `[B]` inputs -> `(loss, approx_kl, clipfrac)`.

        A    = clip(advantages, -adv_clip_max, adv_clip_max)
        rho  = exp(log_prob - old_log_prob)
        loss = mean(max(-A * rho, -A * clip(rho, 1 - clip_range, 1 + clip_range)))
        approx_kl = mean((log_prob - old_log_prob)^2) / 2;  clipfrac = mean(|rho - 1| > clip_range)
    """
    advantages = torch.clamp(advantages, -adv_clip_max, adv_clip_max)
    ratio = torch.exp(log_prob - old_log_prob)
    per_sample, _, _ = clipped_surrogate(ratio, advantages, clip_range, clip_range)
    approx_kl = 0.5 * torch.mean((log_prob - old_log_prob) ** 2)
    clipfrac = torch.mean((torch.abs(ratio - 1.0) > clip_range).float())
    return per_sample.mean(), approx_kl, clipfrac


class DDPOTrainer(DiffusionTrainer):
    """DDPO on a `DDPOStableDiffusionPipeline`; TRL 0.23.1's constructor.

    `reward_function(images, prompts, prompt_metadata) -> (rewards, reward_metadata)`;
    `prompt_function() -> (prompt, prompt_metadata)`; `image_samples_hook(prompt_image_data, global_step, tracker)`
    is called each epoch with `[images, prompts, prompt_metadata, rewards, reward_metadata]` per sampled batch.
    """

    _tag_names = ["trl", "ddpo"]
    _tracker_key = "ddpo_trainer_config"

    def __init__(
        self,
        config: DDPOConfig,
        reward_function: Callable[[torch.Tensor, tuple[str], tuple[Any]], torch.Tensor],
        prompt_function: Callable[[], tuple[str, Any]],
        sd_pipeline: DDPOStableDiffusionPipeline,
        image_samples_hook: Callable[[Any, Any, Any], Any] | None = None,
    ):
        # number of timesteps of each trajectory trained on
        self.num_train_timesteps = int(config.sample_num_steps * config.train_timestep_fraction)
        super().__init__(config, reward_function, prompt_function, sd_pipeline, image_samples_hook)

    def _accumulation_steps(self) -> int:
        # accumulate over every trained timestep of `train_gradient_accumulation_steps` samples
        return self.config.train_gradient_accumulation_steps * self.num_train_timesteps

    def _config_problem(self) -> str:
        c, n = self.config, self.accelerator.num_processes
        samples_per_epoch = c.sample_batch_size * n * c.sample_num_batches_per_epoch
        total_train_batch_size = c.train_batch_size * n * c.train_gradient_accumulation_steps
        if c.sample_batch_size < c.train_batch_size:
            return (f"Sample batch size ({c.sample_batch_size}) must be greater than or equal to the train batch size "
                    f"({c.train_batch_size})")
        if c.sample_batch_size % c.train_batch_size:
            return (f"Sample batch size ({c.sample_batch_size}) must be divisible by the train batch size "
                    f"({c.train_batch_size})")
        if samples_per_epoch % total_train_batch_size:
            return (f"Number of samples per epoch ({samples_per_epoch}) must be divisible by the total train batch "
                    f"size ({total_train_batch_size})")
        return ""

    def _setup_extras(self) -> None:
        if self.config.per_prompt_stat_tracking:
            self.stat_tracker = PerPromptStatTracker(self.config.per_prompt_stat_tracking_buffer_size,
                                                     self.config.per_prompt_stat_tracking_min_count)
        if self.config.async_reward_computation:
            self.executor = futures.ThreadPoolExecutor(max_workers=self.config.max_workers)

    # -- one epoch ---------------------------------------------------------------------------------------------
    def compute_rewards(self, prompt_image_pairs: list[list[Any]], is_async: bool = False) -> Any:
        """`(rewards, reward_metadata)`, one entry per sampled batch."""
        device = self.accelerator.device
        if is_async:
            pending = self.executor.map(lambda x: self.reward_fn(*x), prompt_image_pairs)
            rewards = [(torch.as_tensor(r.result(), device=device), m.result()) for r, m in pending]
        else:
            rewards = []
            for images, prompts, prompt_metadata in prompt_image_pairs:
                reward, reward_metadata = self.reward_fn(images, prompts, prompt_metadata)
                rewards.append((torch.as_tensor(reward, device=device), reward_metadata))
        return zip(*rewards)

    def step(self, epoch: int, global_step: int) -> int:
        """Sample, reward, compute advantages, then `train_num_inner_epochs` passes of the clipped objective.
        Returns the updated `global_step` (one per optimizer step)."""
        c, accelerator = self.config, self.accelerator
        batches, prompt_image_data = self._generate_samples(iterations=c.sample_num_batches_per_epoch,
                                                            batch_size=c.sample_batch_size)
        samples = {k: torch.cat([b[k] for b in batches]) for k in batches[0]}
        rewards, rewards_metadata = self.compute_rewards(prompt_image_data, is_async=c.async_reward_computation)
        for i, image_data in enumerate(prompt_image_data):
            image_data.extend([rewards[i], rewards_metadata[i]])
        if self.image_samples_callback is not None:
            self.image_samples_callback(prompt_image_data, global_step, accelerator.trackers[0])

        rewards = accelerator.gather(torch.cat(rewards)).cpu().numpy()
        accelerator.log({"reward": rewards, "epoch": epoch, "reward_mean": rewards.mean(),
                         "reward_std": rewards.std()}, step=global_step)
        if c.per_prompt_stat_tracking:
            prompt_ids = accelerator.gather(samples["prompt_ids"]).cpu().numpy()
            prompts = self.sd_pipeline.tokenizer.batch_decode(prompt_ids, skip_special_tokens=True)
            advantages = self.stat_tracker.update(prompts, rewards)
        else:
            advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-8)
        # the advantages were computed over every process's samples: keep this process's share
        samples["advantages"] = (torch.as_tensor(advantages).reshape(accelerator.num_processes, -1)
                                 [accelerator.process_index].to(accelerator.device))
        del samples["prompt_ids"]

        total, num_steps = samples["timesteps"].shape
        device = accelerator.device
        for inner_epoch in range(c.train_num_inner_epochs):
            perm = torch.randperm(total, device=device)
            samples = {k: v[perm] for k, v in samples.items()}
            # an independent order of the timesteps for each sample
            time_perm = torch.stack([torch.randperm(num_steps, device=device) for _ in range(total)])
            rows = torch.arange(total, device=device)[:, None]
            for key in ("timesteps", "latents", "next_latents", "log_probs"):
                samples[key] = samples[key][rows, time_perm]
            # re-batch: train_batch_size may differ from sample_batch_size
            chunks = {k: v.reshape(-1, c.train_batch_size, *v.shape[1:]) for k, v in samples.items()}
            batched = [{k: v[i] for k, v in chunks.items()} for i in range(total // c.train_batch_size)]
            self.sd_pipeline.unet.train()
            global_step = self._train_batched_samples(inner_epoch, epoch, global_step, batched)
            if not accelerator.sync_gradients:
                raise ValueError("the inner epoch ended between optimizer steps: check the gradient accumulation "
                                 "settings against the samples per epoch")
        self._maybe_save_state(epoch)
        return global_step

    def calculate_loss(self, latents: torch.Tensor, timesteps: torch.Tensor, next_latents: torch.Tensor,
                       log_probs: torch.Tensor, advantages: torch.Tensor, embeds: torch.Tensor
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Re-score the stored step `latents -> next_latents` at `timesteps` under the current UNet: `(loss,
        approx_kl, clipfrac)`. With `train_cfg`, `embeds` is `[negative; prompt]` and guidance is applied."""
        c = self.config
        with self.autocast():
            unet = self.sd_pipeline.unet
            if c.train_cfg:
                uncond, text = unet(torch.cat([latents] * 2), torch.cat([timesteps] * 2), embeds).sample.chunk(2)
                noise_pred = uncond + c.sample_guidance_scale * (text - uncond)
            else:
                noise_pred = unet(latents, timesteps, embeds).sample
            log_prob = self.sd_pipeline.scheduler_step(noise_pred, timesteps, latents, eta=c.sample_eta,
                                                       prev_sample=next_latents).log_probs
        return ddpo_loss(log_prob, log_probs, advantages, c.train_clip_range, c.train_adv_clip_max)

    def loss(self, advantages: torch.Tensor, clip_range: float, ratio: torch.Tensor) -> torch.Tensor:
        """TRL's method: the clipped surrogate for given ratios (no advantage clipping)."""
        return clipped_surrogate(ratio, advantages, clip_range, clip_range)[0].mean()

    def _generate_samples(self, iterations: int, batch_size: int) -> tuple[list[dict[str, torch.Tensor]],
                                                                           list[list[Any]]]:
        """`iterations` batches of trajectories (`latents`, `next_latents`, `log_probs`, `timesteps`: `[B, T, ...]`)
        and `[images, prompts, prompt_metadata]` per batch."""
        samples, prompt_image_pairs = [], []
        self.sd_pipeline.unet.eval()
        negative = self.neg_prompt_embed.repeat(batch_size, 1, 1)
        for _ in range(iterations):
            prompts, prompt_metadata = zip(*[self.prompt_fn() for _ in range(batch_size)])
            prompt_ids, prompt_embeds = self._encode(list(prompts))
            with self.autocast():
                out = self.sd_pipeline(prompt_embeds=prompt_embeds, negative_prompt_embeds=negative,
                                       num_inference_steps=self.config.sample_num_steps,
                                       guidance_scale=self.config.sample_guidance_scale, eta=self.config.sample_eta,
                                       output_type="pt")
            latents = torch.stack(out.latents, dim=1)  # [B, T + 1, C, H, W]
            samples.append({
                "prompt_ids": prompt_ids,
                "prompt_embeds": prompt_embeds,
                "timesteps": self.sd_pipeline.scheduler.timesteps.repeat(batch_size, 1),  # [B, T]
                "latents": latents[:, :-1],  # the latent before each step
                "next_latents": latents[:, 1:],  # and after it
                "log_probs": torch.stack(out.log_probs, dim=1),  # [B, T]
                "negative_prompt_embeds": negative,
            })
            prompt_image_pairs.append([out.images, prompts, prompt_metadata])
        return samples, prompt_image_pairs

    def _train_batched_samples(self, inner_epoch: int, epoch: int, global_step: int,
                               batched_samples: list[dict[str, torch.Tensor]]) -> int:
        """The optimisation pass: one loss per (batch, trained timestep), an optimizer step per accumulation."""
        info: dict[str, list[torch.Tensor]] = defaultdict(list)
        for sample in batched_samples:
            embeds = (torch.cat([sample["negative_prompt_embeds"], sample["prompt_embeds"]]) if self.config.train_cfg
                      else sample["prompt_embeds"])
            for j in range(self.num_train_timesteps):
                with self.accelerator.accumulate(self.sd_pipeline.unet):
                    loss, approx_kl, clipfrac = self.calculate_loss(
                        sample["latents"][:, j], sample["timesteps"][:, j], sample["next_latents"][:, j],
                        sample["log_probs"][:, j], sample["advantages"], embeds)
                    info["approx_kl"].append(approx_kl.detach())
                    info["clipfrac"].append(clipfrac.detach())
                    info["loss"].append(loss.detach())
                    self._optimizer_step(loss)
                if self.accelerator.sync_gradients:
                    logged = self.accelerator.reduce({k: torch.mean(torch.stack(v)) for k, v in info.items()},
                                                     reduction="mean")
                    logged.update({"epoch": epoch, "inner_epoch": inner_epoch})
                    self.accelerator.log(logged, step=global_step)
                    global_step += 1
                    info = defaultdict(list)
        return global_step
