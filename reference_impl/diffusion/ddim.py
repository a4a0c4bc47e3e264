"""One DDIM step as a Gaussian policy: the sample `x_{t-1}` and its log-density under the step's distribution.

DDPO (Black et al. 2023, sec. 4.2) treats each denoising step as an action: with `eta > 0`, DDIM's update (Song et
al. 2021, eq. 12) is a draw from an isotropic Gaussian

    x_{t-1} ~ N(mu_t, sigma_t^2 I),
    x0_hat  = (x_t - sqrt(1 - a_t) * eps) / sqrt(a_t)                        (predicted x_0, for eps-prediction)
    mu_t    = sqrt(a_prev) * x0_hat + sqrt(1 - a_prev - sigma_t^2) * eps        ("direction pointing to x_t")
    sigma_t = eta * sqrt((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev))        (eq. 16)

where `a_t` is `alphas_cumprod[t]` and `a_prev` that of the previous timestep `t - T / num_inference_steps`. The
log-probability of the sample is the Gaussian's log-density, averaged (not summed) over the latent's elements, as
TRL and ddpo-pytorch do; the PPO ratio only ever uses differences of it.

As in TRL 0.23.1 (and ddpo-pytorch), the previous timestep is clamped at 0, so the final step uses `alphas_cumprod[0]`
rather than the scheduler's `final_alpha_cumprod`; kept so that migrated runs optimise what they did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from diffusers.utils.torch_utils import randn_tensor


@dataclass
class DDPOSchedulerOutput:
    """`latents`: the sample `x_{t-1}`, `[B, C, H, W]`; `log_probs`: its log-density per batch element, `[B]`."""

    latents: torch.Tensor
    log_probs: torch.Tensor


def _per_sample(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """`values` (a scalar or one per batch element) shaped to broadcast against `like` (`[B, ...]`)."""
    values = values.reshape(values.shape + (1,) * (like.ndim - values.ndim))
    return values.to(like.device)


def ddim_step_with_logprob(
    scheduler,
    model_output: torch.Tensor,
    timestep: torch.Tensor | int,
    sample: torch.Tensor,
    eta: float = 0.0,
    use_clipped_model_output: bool = False,
    generator: torch.Generator | None = None,
    prev_sample: torch.Tensor | None = None,
) -> DDPOSchedulerOutput:
    """One step `x_t -> x_{t-1}` of a diffusers `DDIMScheduler` (after `set_timesteps`), with the log-density.

    `timestep` is a scalar or one timestep per batch element. With `prev_sample` given, that sample is scored instead
    of drawing a new one (DDPO's training pass re-scores the stored trajectory under the current model); it is
    treated as data (no gradient flows into it), while the mean keeps its gradient to the model output.
    """
    if scheduler.num_inference_steps is None:
        raise ValueError("the scheduler has no timesteps: call `scheduler.set_timesteps(n)` first")
    if prev_sample is not None and generator is not None:
        raise ValueError("pass either `generator` (draw a new sample) or `prev_sample` (score a given one), not both")
    config = scheduler.config
    timestep = torch.as_tensor(timestep).cpu()
    prev_timestep = (timestep - config.num_train_timesteps // scheduler.num_inference_steps).clamp(
        0, config.num_train_timesteps - 1)

    # the schedule's coefficients in float32 (TRL's precision for fp16/bf16/fp32 latents), float64 for float64 ones
    alphas = scheduler.alphas_cumprod.to(torch.promote_types(scheduler.alphas_cumprod.dtype, sample.dtype))
    alpha_t = _per_sample(alphas[timestep], sample)
    alpha_prev = _per_sample(alphas[prev_timestep], sample)
    beta_t = 1 - alpha_t

    # the model's prediction, as (x0_hat, eps_hat)
    if config.prediction_type == "epsilon":
        eps = model_output
        x0 = (sample - beta_t.sqrt() * eps) / alpha_t.sqrt()
    elif config.prediction_type == "sample":
        x0 = model_output
        eps = (sample - alpha_t.sqrt() * x0) / beta_t.sqrt()
    elif config.prediction_type == "v_prediction":
        x0 = alpha_t.sqrt() * sample - beta_t.sqrt() * model_output
        eps = alpha_t.sqrt() * model_output + beta_t.sqrt() * sample
    else:
        raise ValueError(f"prediction_type {config.prediction_type!r}: expected epsilon, sample or v_prediction")

    if config.thresholding:
        x0 = scheduler._threshold_sample(x0)
    elif config.clip_sample:
        x0 = x0.clamp(-config.clip_sample_range, config.clip_sample_range)
    if use_clipped_model_output:  # re-derive eps from the clipped x0 (GLIDE)
        eps = (sample - alpha_t.sqrt() * x0) / beta_t.sqrt()

    # eq. 16 and eq. 12
    variance = (1 - alpha_prev) / (1 - alpha_t) * (1 - alpha_t / alpha_prev)
    std = eta * variance.sqrt()
    mean = alpha_prev.sqrt() * x0 + (1 - alpha_prev - std**2).sqrt() * eps

    if prev_sample is None:
        noise = randn_tensor(model_output.shape, generator=generator, device=model_output.device,
                             dtype=model_output.dtype)
        prev_sample = mean + std * noise

    log_density = (-((prev_sample.detach() - mean) ** 2) / (2 * std**2) - std.log()
                   - math.log(math.sqrt(2 * math.pi)))
    log_prob = log_density.mean(dim=tuple(range(1, log_density.ndim)))
    return DDPOSchedulerOutput(prev_sample.type(sample.dtype), log_prob)
