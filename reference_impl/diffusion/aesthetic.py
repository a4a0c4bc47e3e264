"""The aesthetic reward of DDPO and AlignProp: the LAION aesthetic predictor (an MLP on normalised CLIP ViT-L/14
image embeddings, https://github.com/christophschuhmann/improved-aesthetic-predictor), TRL 0.23.1's
`trl.models.auxiliary_modules`. Differentiable in the images, so AlignProp can backpropagate through it.

The MLP weights are downloaded from the Hub (`trl-lib/ddpo-aesthetic-predictor`, `aesthetic-model.pth` in TRL's
examples) or read from a local folder of that name; CLIP from `openai/clip-vit-large-patch14`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from huggingface_hub import hf_hub_download
from huggingface_hub.utils import EntryNotFoundError
from torch import nn
from transformers import CLIPModel, is_torch_npu_available, is_torch_xpu_available

CLIP_MODEL = "openai/clip-vit-large-patch14"
# CLIP's image normalisation and input size
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
CLIP_SIZE = 224


class MLP(nn.Module):
    """The predictor head: 768 -> 1024 -> 128 -> 64 -> 16 -> 1 (dropout between, no activations, as trained)."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(768, 1024), nn.Dropout(0.2), nn.Linear(1024, 128), nn.Dropout(0.2), nn.Linear(128, 64),
            nn.Dropout(0.1), nn.Linear(64, 16), nn.Linear(16, 1))

    def forward(self, embed: torch.Tensor) -> torch.Tensor:
        return self.layers(embed)


def _resize_short_side(images: torch.Tensor, size: int) -> torch.Tensor:
    """`torchvision.transforms.Resize(size)` on a `[B, C, H, W]` batch: the shorter side to `size`, bilinear with
    antialiasing, the aspect ratio kept."""
    h, w = images.shape[-2:]
    short, long = (h, w) if h <= w else (w, h)
    new_long = int(size * long / short)
    out = (size, new_long) if h <= w else (new_long, size)
    return F.interpolate(images, size=out, mode="bilinear", antialias=True, align_corners=False)


class AestheticScorer(nn.Module):
    """`scorer(images)` -> `[B]` aesthetic scores of images in `[0, 1]`, `[B, 3, H, W]`."""

    def __init__(self, *, dtype: torch.dtype, model_id: str, model_filename: str):
        super().__init__()
        self.clip = CLIPModel.from_pretrained(CLIP_MODEL)
        self.target_size = CLIP_SIZE
        self.mlp = MLP()
        try:
            path = hf_hub_download(model_id, model_filename)
        except EntryNotFoundError:
            path = os.path.join(model_id, model_filename)
        self.mlp.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        self.dtype = dtype
        self.eval()

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        device = next(self.parameters()).device
        images = _resize_short_side(images, self.target_size)
        mean = torch.tensor(CLIP_MEAN, device=images.device, dtype=images.dtype).view(1, 3, 1, 1)
        std = torch.tensor(CLIP_STD, device=images.device, dtype=images.dtype).view(1, 3, 1, 1)
        images = ((images - mean) / std).to(self.dtype).to(device)
        embed = self.clip.get_image_features(pixel_values=images)
        embed = embed / torch.linalg.vector_norm(embed, dim=-1, keepdim=True)
        return self.mlp(embed).squeeze(1)


def aesthetic_scorer(hub_model_id: str, model_filename: str) -> Callable[[torch.Tensor, Any, Any],
                                                                        tuple[torch.Tensor, dict]]:
    """A reward function `(images, prompts, metadata) -> (scores, {})` for the trainers. The scorer runs on an NPU,
    XPU or CUDA device when there is one; TRL 0.23.1 moved it to CUDA unconditionally, here it stays on the CPU
    where no accelerator exists."""
    scorer = AestheticScorer(model_id=hub_model_id, model_filename=model_filename, dtype=torch.float32)
    if is_torch_npu_available():
        scorer = scorer.npu()
    elif is_torch_xpu_available():
        scorer = scorer.xpu()
    elif torch.cuda.is_available():
        scorer = scorer.cuda()

    def _fn(images: torch.Tensor, prompts: Any, metadata: Any) -> tuple[torch.Tensor, dict]:
        return scorer(images.clamp(0, 1)), {}

    return _fn
