"""The Stable Diffusion pipeline the diffusion trainers drive: sampling that keeps what RL needs.

`DDPOStableDiffusionPipeline` is the interface both trainers use (TRL 0.23.1's: the components as properties, a
sampling `__call__`, a `scheduler_step` that scores a given sample, LoRA set-up and checkpoint hooks).
`DefaultDDPOStableDiffusionPipeline` implements it on diffusers' `StableDiffusionPipeline` with a `DDIMScheduler`.

Sampling is one loop (`_denoise`) used two ways:

* DDPO (`pipeline_step`, under `no_grad`): every latent `x_T, ..., x_0` and every step's log-probability are returned,
  the trajectory the policy-gradient update re-scores;
* AlignProp (`pipeline_step_with_grad`): the decoded image keeps its graph to the UNet's weights, so the reward's
  gradient flows back through the chain. Truncated backprop (AlignProp sec. 4, after DRaFT) detaches the UNet's output
  at the early steps; with `gradient_checkpoint` each UNet call is recomputed in the backward pass instead of stored.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils.checkpoint
from diffusers import DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
from diffusers.pipelines.stable_diffusion.pipeline_stable_diffusion import (
    rescale_noise_cfg,
)
from diffusers.utils import convert_state_dict_to_diffusers

from .ddim import DDPOSchedulerOutput, ddim_step_with_logprob

logger = logging.getLogger(__name__)

#: TRL 0.23.1's LoRA for the UNet: rank 4 on the attention projections, Gaussian init
LORA_RANK = 4
LORA_TARGETS = ("to_k", "to_q", "to_v", "to_out.0")
LORA_WEIGHTS = "pytorch_lora_weights.safetensors"


@dataclass
class DDPOPipelineOutput:
    """`images`; `latents`: `[x_T, ..., x_0]` (num_steps + 1 tensors); `log_probs`: one `[B]` tensor per step."""

    images: torch.Tensor
    latents: list[torch.Tensor]
    log_probs: list[torch.Tensor]


class DDPOStableDiffusionPipeline:
    """What the DDPO and AlignProp trainers need from a pipeline (subclass it for another model family)."""

    def __call__(self, *args: Any, **kwargs: Any) -> DDPOPipelineOutput:
        """Sample images, recording every latent and log-probability (no gradients)."""
        raise NotImplementedError

    def scheduler_step(self, *args: Any, **kwargs: Any) -> DDPOSchedulerOutput:
        """One denoising step with its log-probability (`ddim_step_with_logprob`)."""
        raise NotImplementedError

    @property
    def unet(self) -> Any:
        raise NotImplementedError

    @property
    def vae(self) -> Any:
        raise NotImplementedError

    @property
    def tokenizer(self) -> Any:
        raise NotImplementedError

    @property
    def scheduler(self) -> Any:
        raise NotImplementedError

    @property
    def text_encoder(self) -> Any:
        raise NotImplementedError

    @property
    def autocast(self) -> Any:
        """A context-manager factory for the training forward, or None for the accelerator's own autocast."""
        raise NotImplementedError

    def set_progress_bar_config(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def save_pretrained(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def get_trainable_layers(self, *args: Any, **kwargs: Any) -> Any:
        """The module (or parameter list) the optimizer trains."""
        raise NotImplementedError

    def save_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        """accelerate's save-state pre-hook: write the trainable weights."""
        raise NotImplementedError

    def load_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        """accelerate's load-state pre-hook: read the trainable weights back."""
        raise NotImplementedError


def _never(step: int) -> bool:
    return False


def _denoise(
    sd: StableDiffusionPipeline,
    *,
    prompt: str | list[str] | None = None,
    height: int | None = None,
    width: int | None = None,
    num_inference_steps: int = 50,
    guidance_scale: float = 7.5,
    negative_prompt: str | list[str] | None = None,
    num_images_per_prompt: int | None = 1,
    eta: float = 0.0,
    generator: torch.Generator | list[torch.Generator] | None = None,
    latents: torch.Tensor | None = None,
    prompt_embeds: torch.Tensor | None = None,
    negative_prompt_embeds: torch.Tensor | None = None,
    output_type: str | None = "pil",
    callback: Callable[[int, int, torch.Tensor], None] | None = None,
    callback_steps: int = 1,
    cross_attention_kwargs: dict[str, Any] | None = None,
    guidance_rescale: float = 0.0,
    detach_step: Callable[[int], bool] = _never,
    gradient_checkpoint: bool = False,
) -> DDPOPipelineOutput:
    """The sampling loop: prompt set-up without gradients, then `num_inference_steps` DDIM steps with log-probs.

    `detach_step(i)` says whether step `i`'s noise prediction is cut from the graph (truncated backprop); the caller
    decides whether a graph is built at all (`torch.no_grad` around the call or not).
    """
    height = height or sd.unet.config.sample_size * sd.vae_scale_factor
    width = width or sd.unet.config.sample_size * sd.vae_scale_factor
    guided = guidance_scale > 1.0  # classifier-free guidance (Ho & Salimans 2022)

    with torch.no_grad():
        sd.check_inputs(prompt, height, width, callback_steps, negative_prompt, prompt_embeds, negative_prompt_embeds)
        if prompt is not None:
            batch_size = 1 if isinstance(prompt, str) else len(prompt)
        else:
            batch_size = prompt_embeds.shape[0]
        device = sd._execution_device
        lora_scale = (cross_attention_kwargs or {}).get("scale")
        prompt_embeds, negative_prompt_embeds = sd.encode_prompt(
            prompt, device, num_images_per_prompt, guided, negative_prompt, prompt_embeds=prompt_embeds,
            negative_prompt_embeds=negative_prompt_embeds, lora_scale=lora_scale)
        if guided:  # one UNet call for both halves: [unconditional, conditional]
            prompt_embeds = torch.cat([negative_prompt_embeds, prompt_embeds])
        sd.scheduler.set_timesteps(num_inference_steps, device=device)
        timesteps = sd.scheduler.timesteps
        latents = sd.prepare_latents(batch_size * num_images_per_prompt, sd.unet.config.in_channels, height, width,
                                     prompt_embeds.dtype, device, generator, latents)

    all_latents, all_log_probs = [latents], []
    with sd.progress_bar(total=num_inference_steps) as progress_bar:
        for i, t in enumerate(timesteps):
            model_input = torch.cat([latents] * 2) if guided else latents
            model_input = sd.scheduler.scale_model_input(model_input, t)
            if gradient_checkpoint:
                noise_pred = torch.utils.checkpoint.checkpoint(
                    sd.unet, model_input, t, prompt_embeds, cross_attention_kwargs=cross_attention_kwargs,
                    return_dict=False, use_reentrant=False)[0]
            else:
                noise_pred = sd.unet(model_input, t, encoder_hidden_states=prompt_embeds,
                                     cross_attention_kwargs=cross_attention_kwargs, return_dict=False)[0]
            if detach_step(i):
                noise_pred = noise_pred.detach()
            if guided:
                uncond, text = noise_pred.chunk(2)
                noise_pred = uncond + guidance_scale * (text - uncond)
                if guidance_rescale > 0.0:  # Lin et al. 2023, sec. 3.4
                    noise_pred = rescale_noise_cfg(noise_pred, text, guidance_rescale=guidance_rescale)
            step = ddim_step_with_logprob(sd.scheduler, noise_pred, t, latents, eta)
            latents = step.latents
            all_latents.append(latents)
            all_log_probs.append(step.log_probs)
            progress_bar.update()
            if callback is not None and i % callback_steps == 0:
                callback(i, t, latents)

    if output_type == "latent":
        image = latents
    else:
        image = sd.vae.decode(latents / sd.vae.config.scaling_factor, return_dict=False)[0]
        image, nsfw = sd.run_safety_checker(image, device, prompt_embeds.dtype)
        denormalize = [True] * image.shape[0] if nsfw is None else [not flagged for flagged in nsfw]
        image = sd.image_processor.postprocess(image, output_type=output_type, do_denormalize=denormalize)
    if getattr(sd, "final_offload_hook", None) is not None:
        sd.final_offload_hook.offload()
    return DDPOPipelineOutput(image, all_latents, all_log_probs)


def pipeline_step(sd: StableDiffusionPipeline, prompt: str | list[str] | None = None, *, return_dict: bool = True,
                  **kwargs: Any) -> DDPOPipelineOutput:
    """DDPO's sampling: `StableDiffusionPipeline.__call__`'s arguments, no gradients, every latent and log-prob."""
    with torch.no_grad():
        return _denoise(sd, prompt=prompt, **kwargs)


def pipeline_step_with_grad(
    sd: StableDiffusionPipeline,
    prompt: str | list[str] | None = None,
    *,
    truncated_backprop: bool = True,
    truncated_backprop_rand: bool = True,
    gradient_checkpoint: bool = True,
    truncated_backprop_timestep: int = 49,
    truncated_rand_backprop_minmax: tuple[int, int] = (0, 50),
    return_dict: bool = True,
    **kwargs: Any,
) -> DDPOPipelineOutput:
    """AlignProp's sampling: the image keeps its graph to the UNet; early steps are detached (truncated backprop).

    Fixed truncation keeps the gradient of steps `i >= truncated_backprop_timestep`. Randomised truncation draws
    `K ~ U{min, max}` and keeps step `i` when `i >= K`; as in TRL 0.23.1, `K` is drawn anew at every step (the paper
    draws it once per chain), so later steps keep their gradient more often.
    """
    if not truncated_backprop:
        detach = _never
    elif truncated_backprop_rand:
        low, high = truncated_rand_backprop_minmax

        def detach(i: int) -> bool:
            return i < random.randint(low, high)
    else:

        def detach(i: int) -> bool:
            return i < truncated_backprop_timestep

    return _denoise(sd, prompt=prompt, detach_step=detach, gradient_checkpoint=gradient_checkpoint, **kwargs)


class DefaultDDPOStableDiffusionPipeline(DDPOStableDiffusionPipeline):
    """`StableDiffusionPipeline.from_pretrained(pretrained_model_name)` with a DDIM scheduler, no safety checker,
    the VAE and text encoder frozen; with `use_lora` only a rank-4 LoRA on the UNet's attention is trained (loaded
    from the model folder's `pytorch_lora_weights.safetensors` when there is one)."""

    def __init__(self, pretrained_model_name: str, *, pretrained_model_revision: str = "main", use_lora: bool = True):
        self.sd_pipeline = StableDiffusionPipeline.from_pretrained(pretrained_model_name,
                                                                   revision=pretrained_model_revision)
        self.use_lora = use_lora
        self.pretrained_model = pretrained_model_name
        self.pretrained_revision = pretrained_model_revision
        try:
            self.sd_pipeline.load_lora_weights(pretrained_model_name, weight_name=LORA_WEIGHTS,
                                               revision=pretrained_model_revision)
            self.use_lora = True
        except OSError:
            if use_lora:
                logger.warning(f"no {LORA_WEIGHTS} in {pretrained_model_name}: a new LoRA will be trained")
        self.sd_pipeline.scheduler = DDIMScheduler.from_config(self.sd_pipeline.scheduler.config)
        self.sd_pipeline.safety_checker = None
        self.sd_pipeline.vae.requires_grad_(False)
        self.sd_pipeline.text_encoder.requires_grad_(False)
        self.sd_pipeline.unet.requires_grad_(not self.use_lora)

    def __call__(self, *args: Any, **kwargs: Any) -> DDPOPipelineOutput:
        return pipeline_step(self.sd_pipeline, *args, **kwargs)

    def rgb_with_grad(self, *args: Any, **kwargs: Any) -> DDPOPipelineOutput:
        return pipeline_step_with_grad(self.sd_pipeline, *args, **kwargs)

    def scheduler_step(self, *args: Any, **kwargs: Any) -> DDPOSchedulerOutput:
        return ddim_step_with_logprob(self.sd_pipeline.scheduler, *args, **kwargs)

    @property
    def unet(self) -> UNet2DConditionModel:
        return self.sd_pipeline.unet

    @property
    def vae(self) -> Any:
        return self.sd_pipeline.vae

    @property
    def tokenizer(self) -> Any:
        return self.sd_pipeline.tokenizer

    @property
    def scheduler(self) -> DDIMScheduler:
        return self.sd_pipeline.scheduler

    @property
    def text_encoder(self) -> Any:
        return self.sd_pipeline.text_encoder

    @property
    def autocast(self) -> Any:
        # LoRA trains without autocast (its fp32 adapter weights); full fine-tuning uses the accelerator's
        return contextlib.nullcontext if self.use_lora else None

    def _lora_state_dict(self, unet: UNet2DConditionModel) -> dict[str, torch.Tensor]:
        from peft.utils import get_peft_model_state_dict

        return convert_state_dict_to_diffusers(get_peft_model_state_dict(unet))

    def save_pretrained(self, output_dir: str) -> None:
        if self.use_lora:
            self.sd_pipeline.save_lora_weights(save_directory=output_dir,
                                               unet_lora_layers=self._lora_state_dict(self.sd_pipeline.unet))
        self.sd_pipeline.save_pretrained(output_dir)

    def set_progress_bar_config(self, *args: Any, **kwargs: Any) -> None:
        self.sd_pipeline.set_progress_bar_config(*args, **kwargs)

    def get_trainable_layers(self) -> UNet2DConditionModel:
        if self.use_lora:
            from peft import LoraConfig

            lora = LoraConfig(r=LORA_RANK, lora_alpha=LORA_RANK, init_lora_weights="gaussian",
                              target_modules=list(LORA_TARGETS))
            self.sd_pipeline.unet.add_adapter(lora)
            for param in self.sd_pipeline.unet.parameters():
                if param.requires_grad:  # the adapter trains in fp32 (fp16 grads would not unscale)
                    param.data = param.to(torch.float32)
        return self.sd_pipeline.unet

    def save_checkpoint(self, models: list[Any], weights: list[Any], output_dir: str) -> None:
        unet = _only(models)
        if self.use_lora and getattr(unet, "peft_config", None) is not None:
            self.sd_pipeline.save_lora_weights(save_directory=output_dir, unet_lora_layers=self._lora_state_dict(unet))
        elif not self.use_lora and isinstance(unet, UNet2DConditionModel):
            unet.save_pretrained(os.path.join(output_dir, "unet"))
        else:
            raise ValueError(f"cannot save a checkpoint of {type(unet).__name__}")

    def load_checkpoint(self, models: list[Any], input_dir: str) -> None:
        unet = _only(models)
        if self.use_lora:
            state_dict, alphas = self.sd_pipeline.lora_state_dict(input_dir, weight_name=LORA_WEIGHTS)
            self.sd_pipeline.load_lora_into_unet(state_dict, network_alphas=alphas, unet=unet)
        elif isinstance(unet, UNet2DConditionModel):
            loaded = UNet2DConditionModel.from_pretrained(input_dir, subfolder="unet")
            unet.register_to_config(**loaded.config)
            unet.load_state_dict(loaded.state_dict())
        else:
            raise ValueError(f"cannot load a checkpoint into {type(unet).__name__}")


def _only(models: list[Any]) -> Any:
    if len(models) != 1:
        raise ValueError(f"expected the one trained UNet, got {len(models)} models")
    return models[0]
