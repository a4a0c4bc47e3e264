"""Diffusion RL, the trainers TRL 0.24 removed: DDPO (Black et al. 2023) and AlignProp (Prabhudesai et al. 2023).

Same public names, constructor signatures and config fields as TRL 0.23.1, the last release that had them, so
`compat.trl.DDPOTrainer` and friends resolve here on TRL >= 0.24 and the TRL example scripts run unchanged. Built on
diffusers (`StableDiffusionPipeline`, `DDIMScheduler`, its peft integration for LoRA) and accelerate.

| module | what |
|---|---|
| `ddim.py` | `ddim_step_with_logprob`: one DDIM step (DDIM paper eqs. 12, 16) and the Gaussian log-density of its sample |
| `pipeline.py` | `DDPOStableDiffusionPipeline` (the interface), `DefaultDDPOStableDiffusionPipeline` (on diffusers' SD); sampling that records every latent and log-prob, and the differentiable sampling of AlignProp |
| `ddpo.py` | `DDPOConfig`, `DDPOTrainer`, `PerPromptStatTracker`, `ddpo_loss` (the clipped PPO objective over timesteps) |
| `alignprop.py` | `AlignPropConfig`, `AlignPropTrainer`: the reward's gradient through the (truncated) sampling chain |
| `aesthetic.py` | `aesthetic_scorer`, `AestheticScorer`: the LAION aesthetic predictor on CLIP ViT-L/14, as a reward |

Every name is loaded lazily: `import reference_impl.diffusion` imports neither torch nor diffusers.
"""

from __future__ import annotations

from reference_impl._lazy import lazy_exports

EXPORTS: dict[str, str] = {
    "ddim_step_with_logprob": "ddim",
    "DDPOSchedulerOutput": "ddim",
    "DDPOPipelineOutput": "pipeline",
    "DDPOStableDiffusionPipeline": "pipeline",
    "DefaultDDPOStableDiffusionPipeline": "pipeline",
    "DDPOConfig": "ddpo", "DDPOTrainer": "ddpo", "PerPromptStatTracker": "ddpo", "ddpo_loss": "ddpo",
    "AlignPropConfig": "alignprop", "AlignPropTrainer": "alignprop",
    "aesthetic_scorer": "aesthetic", "AestheticScorer": "aesthetic",
}

__all__ = sorted(EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, EXPORTS, globals())
