"""reference_impl.diffusion: DDPO and AlignProp (TRL 0.23.1's interface) on a tiny Stable Diffusion built here.

The maths against float64 formulas written out again below (the DDIM step's mean, std and log-density; the clipped
DDPO objective; the per-prompt advantages), the configs against TRL 0.23.1's fields in the atlas, and two optimizer
steps of each trainer on a random-weight pipeline saved to a tmp folder and loaded by path.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math

import pytest

pytest.importorskip("diffusers")

import torch
from diffusers import (
    AutoencoderKL,
    DDIMScheduler,
    StableDiffusionPipeline,
    UNet2DConditionModel,
)
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer, HfArgumentParser

from reference_impl.diffusion import (
    AlignPropConfig,
    AlignPropTrainer,
    DDPOConfig,
    DDPOTrainer,
    DefaultDDPOStableDiffusionPipeline,
    PerPromptStatTracker,
    ddim_step_with_logprob,
    ddpo_loss,
)

# -- the DDIM step ------------------------------------------------------------------------------------------------


def _scheduler(steps: int, **overrides) -> DDIMScheduler:
    scheduler = DDIMScheduler(**{"num_train_timesteps": 1000, "clip_sample": False, **overrides})
    scheduler.set_timesteps(steps)
    return scheduler


def _oracle_step(alphas: list[float], t: int, prev_t: int, x: list[float], eps: list[float], eta: float,
                 x_prev: list[float], clip: float | None = None) -> tuple[list[float], float, float]:
    """DDIM eqs. 12 and 16 element by element in float64: (mean, std, mean log-density of x_prev)."""
    a_t, a_prev = alphas[t], alphas[prev_t]
    sigma = eta * math.sqrt((1 - a_prev) / (1 - a_t)) * math.sqrt(1 - a_t / a_prev)
    mean = []
    for xi, ei in zip(x, eps):
        x0 = (xi - math.sqrt(1 - a_t) * ei) / math.sqrt(a_t)
        if clip is not None:  # predicted x_0 clipped; eps stays the model's (use_clipped_model_output=False)
            x0 = min(max(x0, -clip), clip)
        mean.append(math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev - sigma**2) * ei)
    logp = [-(xp - m) ** 2 / (2 * sigma**2) - math.log(sigma) - 0.5 * math.log(2 * math.pi)
            for xp, m in zip(x_prev, mean)]
    return mean, sigma, sum(logp) / len(logp)


@pytest.mark.parametrize("eta", [1.0, 0.5])
def test_ddim_step_log_prob_against_float64_formula(eta):
    torch.manual_seed(0)
    scheduler = _scheduler(10)
    alphas = scheduler.alphas_cumprod.double().tolist()  # the schedule is data; the formula is what is tested
    timesteps = torch.tensor([scheduler.timesteps[3].item(), scheduler.timesteps[6].item()])
    x = torch.randn(2, 4, 3, 3, dtype=torch.float64)
    eps = torch.randn_like(x)
    x_prev = torch.randn_like(x)
    out = ddim_step_with_logprob(scheduler, eps, timesteps, x, eta=eta, prev_sample=x_prev)
    assert out.log_probs.shape == (2,)
    torch.testing.assert_close(out.latents, x_prev)
    for b, t in enumerate(timesteps.tolist()):
        _mean, _sigma, logp = _oracle_step(alphas, t, t - 100, x[b].flatten().tolist(), eps[b].flatten().tolist(),
                                           eta, x_prev[b].flatten().tolist())
        assert out.log_probs[b].item() == pytest.approx(logp, rel=1e-10, abs=1e-10)


def test_ddim_sample_has_the_formulas_mean_and_std():
    """Drawn samples: `(x_prev - mean) / std` is the generator's own standard normal draw."""
    scheduler = _scheduler(4)
    alphas = scheduler.alphas_cumprod.double().tolist()
    t = int(scheduler.timesteps[1])
    x = torch.randn(1, 4, 4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    eps = torch.randn(1, 4, 4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    out = ddim_step_with_logprob(scheduler, eps, torch.tensor(t), x, eta=1.0,
                                 generator=torch.Generator().manual_seed(3))
    noise = torch.randn(1, 4, 4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    mean, sigma, logp = _oracle_step(alphas, t, t - 250, x.flatten().tolist(), eps.flatten().tolist(), 1.0,
                                     out.latents.flatten().tolist())
    expected = torch.tensor(mean, dtype=torch.float64).view_as(x) + sigma * noise
    torch.testing.assert_close(out.latents, expected, rtol=1e-10, atol=1e-10)
    assert out.log_probs.item() == pytest.approx(logp, rel=1e-10)


def test_ddim_step_clips_predicted_x0_and_scores_gradients_through_the_mean():
    scheduler = _scheduler(10, clip_sample=True, clip_sample_range=1.0)
    alphas = scheduler.alphas_cumprod.double().tolist()
    t = int(scheduler.timesteps[8])  # a late step: x0_hat leaves [-1, 1]
    x = 3 * torch.randn(1, 2, 2, 2, dtype=torch.float64)
    eps = torch.randn_like(x, requires_grad=True)
    x_prev = torch.randn_like(x)
    out = ddim_step_with_logprob(scheduler, eps, torch.tensor([t]), x, eta=1.0, prev_sample=x_prev)
    _mean, _sigma, logp = _oracle_step(alphas, t, t - 100, x.flatten().tolist(), eps.detach().flatten().tolist(),
                                       1.0, x_prev.flatten().tolist(), clip=1.0)
    assert out.log_probs.item() == pytest.approx(logp, rel=1e-10)
    out.log_probs.sum().backward()
    assert eps.grad is not None and torch.isfinite(eps.grad).all()


# -- the DDPO objective ---------------------------------------------------------------------------------------


def test_ddpo_loss_against_written_out_ppo_clip():
    new = torch.tensor([0.0, -1.0, -2.0, 0.3, -0.05, 0.2], dtype=torch.float64)
    old = torch.tensor([0.1, -1.2, -1.0, 0.3, 0.0, -0.4], dtype=torch.float64)
    adv = torch.tensor([2.0, -7.0, 1.5, -0.5, 9.0, -3.0], dtype=torch.float64)
    eps, adv_max = 0.2, 5.0
    terms, kl, clipped = [], [], []
    for n, o, a in zip(new.tolist(), old.tolist(), adv.tolist()):
        a = min(max(a, -adv_max), adv_max)
        r = math.exp(n - o)
        terms.append(max(-a * r, -a * min(max(r, 1 - eps), 1 + eps)))
        kl.append(0.5 * (n - o) ** 2)
        clipped.append(1.0 if abs(r - 1) > eps else 0.0)
    loss, approx_kl, clipfrac = ddpo_loss(new, old, adv, eps, adv_max)
    assert loss.item() == pytest.approx(sum(terms) / len(terms), rel=1e-12)
    assert approx_kl.item() == pytest.approx(sum(kl) / len(kl), rel=1e-12)
    assert clipfrac.item() == pytest.approx(sum(clipped) / len(clipped))


def test_per_prompt_advantages_use_the_batch_until_a_prompt_has_min_count():
    tracker = PerPromptStatTracker(buffer_size=3, min_count=2)
    first = tracker.update(["a", "b", "b"], [1.0, 2.0, 4.0])
    mean, std = 7 / 3, math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 3)
    assert first[0] == pytest.approx((1 - mean) / (std + 1e-6))  # "a": one reward so far, batch statistics
    assert first[1] == pytest.approx((2 - 3) / (1 + 1e-6))  # "b": its own two rewards, mean 3, std 1
    second = tracker.update(["b"], [6.0])  # "b" buffer (maxlen 3): 2, 4, 6
    assert second[0] == pytest.approx((6 - 4) / (math.sqrt(8 / 3) + 1e-6))


# -- the configs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [DDPOConfig, AlignPropConfig])
def test_config_fields_and_defaults_are_trl_0_23_1s(cls):
    from migrations.atlas import Atlas

    sig = Atlas.load("trl").signature("0.23.1", f"trl.{cls.__name__}")
    fields = dataclasses.fields(cls)
    assert [f.name for f in fields] == [p.name for p in sig.params]
    config = cls()
    for p in sig.params:
        try:
            expected = ast.literal_eval(p.default)
        except ValueError:
            expected = {} if p.default == "dict()" else None
            if expected is None:
                continue  # exp_name: TRL's expression on sys.argv, the same expression here
        assert getattr(config, p.name) == expected, p.name


def test_hf_argument_parser_takes_the_same_flags():
    (ddpo,) = HfArgumentParser(DDPOConfig).parse_args_into_dataclasses(
        ["--sample_num_steps", "3", "--log_with", "wandb", "--per_prompt_stat_tracking", "--train_cfg", "false"])
    assert (ddpo.sample_num_steps, ddpo.log_with, ddpo.per_prompt_stat_tracking, ddpo.train_cfg) == (
        3, "wandb", True, False)
    (align,) = HfArgumentParser(AlignPropConfig).parse_args_into_dataclasses(
        ["--truncated_backprop_rand", "false", "--mixed_precision", "bf16"])
    assert (align.truncated_backprop_rand, align.mixed_precision, align.negative_prompts) == (False, "bf16", None)


# -- two training steps on a tiny Stable Diffusion -------------------------------------------------------------


def _tiny_tokenizer(folder) -> CLIPTokenizer:
    """A character-level CLIP BPE tokenizer (no merges), written out and read back."""
    chars = sorted(set("abcdefghijklmnopqrstuvwxyz"))
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for c in chars:
        vocab[c] = len(vocab)
        vocab[c + "</w>"] = len(vocab)
    folder.mkdir()
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=8)


@pytest.fixture(scope="module")
def tiny_sd(tmp_path_factory):
    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("tiny_sd")
    tokenizer = _tiny_tokenizer(root / "tok")
    text_encoder = CLIPTextModel(CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_attention_heads=2, num_hidden_layers=1,
        max_position_embeddings=8, bos_token_id=0, eos_token_id=1, pad_token_id=1))
    unet = UNet2DConditionModel(
        sample_size=4, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(8, 8),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=16, attention_head_dim=2, norm_num_groups=4)
    vae = AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(8, 8), layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=4,
        sample_size=8)
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
                                   scheduler=DDIMScheduler(num_train_timesteps=100, steps_offset=1, clip_sample=False), safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)
    path = root / "model"
    pipe.save_pretrained(path)
    return str(path)


_PROMPTS = ["cat", "dog"]


def _prompt_fn():
    _prompt_fn.calls = getattr(_prompt_fn, "calls", 0) + 1
    return _PROMPTS[_prompt_fn.calls % 2], {}


def _brightness(images, prompts, metadata):
    return images.mean(dim=(1, 2, 3)), {}


def _lora_weights(unet) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in unet.named_parameters() if "lora" in n}


@pytest.mark.slow
def test_ddpo_trains_two_steps(tiny_sd, tmp_path):
    pipeline = DefaultDDPOStableDiffusionPipeline(tiny_sd)
    config = DDPOConfig(sample_num_steps=2, sample_batch_size=2, sample_num_batches_per_epoch=1, train_batch_size=1,
                        mixed_precision="no", train_learning_rate=1e-2, train_clip_range=0.2,
                        per_prompt_stat_tracking=True, per_prompt_stat_tracking_min_count=1,
                        project_kwargs={"project_dir": str(tmp_path)})
    trainer = DDPOTrainer(config, _brightness, _prompt_fn, pipeline)
    before = _lora_weights(pipeline.unet)
    assert before, "the LoRA adapter was not added"
    losses = []
    original = trainer.calculate_loss

    def recording(*args):
        out = original(*args)
        losses.append(out[0].item())
        return out

    trainer.calculate_loss = recording
    # 2 samples x 2 timesteps, accumulated over 2 timesteps per sample: 2 optimizer steps
    assert trainer.step(epoch=0, global_step=0) == 2
    assert len(losses) == 4 and all(math.isfinite(v) for v in losses)
    after = _lora_weights(pipeline.unet)
    assert any(not torch.equal(before[n], after[n]) for n in before)
    trainer.save_pretrained(str(tmp_path / "out"))
    assert (tmp_path / "out" / "pytorch_lora_weights.safetensors").exists()


@pytest.mark.slow
def test_alignprop_trains_two_steps_through_the_chain(tiny_sd, tmp_path):
    pipeline = DefaultDDPOStableDiffusionPipeline(tiny_sd)
    config = AlignPropConfig(sample_num_steps=2, train_batch_size=2, mixed_precision="no", train_learning_rate=1e-2,
                             truncated_backprop_rand=False, truncated_backprop_timestep=1,
                             project_kwargs={"project_dir": str(tmp_path), "automatic_checkpoint_naming": True})
    trainer = AlignPropTrainer(config, _brightness, _prompt_fn, pipeline)
    before = _lora_weights(pipeline.unet)
    trainer.train(epochs=2)  # epoch 1 also saves the accelerator state, through the pipeline's checkpoint hook
    after = _lora_weights(pipeline.unet)
    assert any(not torch.equal(before[n], after[n]) for n in before)
    assert (tmp_path / "checkpoints" / "checkpoint_0" / "pytorch_lora_weights.safetensors").exists()


@pytest.mark.slow
def test_truncated_backprop_keeps_the_gradient_of_late_steps_only(tiny_sd):
    """Fixed truncation at step 1 of 2: the UNet gets a gradient; truncation at 2 cuts every step."""
    pipeline = DefaultDDPOStableDiffusionPipeline(tiny_sd, use_lora=False)
    ids = pipeline.tokenizer(["cat"], return_tensors="pt", padding="max_length", max_length=8).input_ids
    embeds = pipeline.text_encoder(ids)[0]
    for cut, expect_grad in ((1, True), (2, False)):
        pipeline.unet.zero_grad(set_to_none=True)
        out = pipeline.rgb_with_grad(prompt_embeds=embeds, negative_prompt_embeds=torch.zeros_like(embeds),
                                     num_inference_steps=2, guidance_scale=2.0, eta=1.0, output_type="pt",
                                     truncated_backprop_rand=False, truncated_backprop_timestep=cut,
                                     gradient_checkpoint=False)
        if expect_grad:
            out.images.mean().backward()
            assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in pipeline.unet.parameters())
        else:
            assert not out.images.requires_grad


def test_compat_trl_resolves_to_the_reference_where_trl_has_no_ddpo():
    """On TRL >= 0.24 (the venv's 1.16) `compat.trl` hands out these classes, with a fallback notice."""
    import warnings

    import compat.trl
    from compat.resolve import NameTable
    from reference_impl import diffusion

    table = NameTable("compat.trl", compat.trl._CANDIDATES)  # a fresh table: the notice is given once per name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in ("DDPOTrainer", "DDPOConfig", "AlignPropTrainer", "DefaultDDPOStableDiffusionPipeline",
                     "aesthetic_scorer", "PerPromptStatTracker"):
            assert table.lookup(name) is getattr(diffusion, name)
    assert any("has no DDPOTrainer" in str(w.message) for w in caught)
