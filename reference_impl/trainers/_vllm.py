"""Generation through a vLLM server's OpenAI-compatible HTTP API (`vllm serve MODEL`), for the online trainers.

Status: code-reviewed and documented, not exercised by the test suite (vLLM does not run on this CPU machine).

How it works:
- completions: `POST {base_url}/v1/completions` with the prompts as token-id lists, `n=1` per prompt row (GRPO's
  sampler already repeats each prompt `num_generations` times), the sampling parameters of the trainer's
  `GenerationConfig` (`max_tokens`, `temperature`, `top_p`, `top_k`, `min_p`, `repetition_penalty`), `logprobs=0`
  (the sampled token's log-prob, used by GRPO's importance-sampling correction) and `return_token_ids=true`
  (vLLM >= 0.10.2 returns `token_ids` per choice; older servers are read through
  `return_tokens_as_token_ids=true`, whose logprob tokens look like `"token_id:123"`).
- weights: the OpenAI API has no endpoint to push full weights. When the policy is a PEFT model, the adapter is saved
  to `vllm_lora_dir` (a directory the server can read) after each optimizer step and loaded with
  `POST /v1/load_lora_adapter` (server started with `--enable-lora` and `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`);
  completions then request that adapter by name. For full fine-tuning the server keeps its initial weights: the
  samples are off-policy, which GRPO's `vllm_importance_sampling_correction` accounts for; restart the server from
  a saved checkpoint to refresh it. TRL's own `trl vllm-serve` (NCCL weight broadcast) is a different protocol.
Every process sends its own prompts; the main process pushes the adapter, the others wait for it (a barrier).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import urllib.request
from typing import Any

from . import _model


class VLLMServerClient:
    """A minimal client for vLLM's OpenAI-compatible server."""

    def __init__(self, base_url: str, model: str | None = None, timeout: float = 240.0,
                 lora_dir: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.lora_dir = lora_dir
        self._lora_name: str | None = None
        self._synced_step = -1

    @classmethod
    def from_args(cls, args: Any) -> VLLMServerClient:
        base = getattr(args, "vllm_server_base_url", None) or (
            f"http://{args.vllm_server_host}:{args.vllm_server_port}"
        )
        client = cls(base, timeout=getattr(args, "vllm_server_timeout", 240.0),
                     lora_dir=os.environ.get("REFERENCE_IMPL_VLLM_LORA_DIR"))
        return client

    # ------------------------------------------------------------------------------------------------- HTTP
    def _request(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(self.base_url + path, data=data,
                                     headers={"Content-Type": "application/json"},
                                     method="GET" if payload is None else "POST")
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - user-configured URL
            body = resp.read()
        return json.loads(body) if body else None

    def wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                models = self._request("/v1/models")
                self.model = self.model or models["data"][0]["id"]
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"vLLM server at {self.base_url} not reachable after {self.timeout}s")
                time.sleep(2.0)

    # ------------------------------------------------------------------------------------------- generation
    def generate(self, prompt_ids: list[list[int]], generation_config: Any
                 ) -> tuple[list[list[int]], list[list[float]]]:
        """Completion token ids and their sampling log-probs, one completion per prompt row."""
        if self.model is None:
            self.wait_until_ready()
        gc = generation_config
        payload = {
            "model": self._lora_name or self.model,
            "prompt": prompt_ids,
            "n": 1,
            "max_tokens": gc.max_new_tokens,
            "temperature": gc.temperature,
            "top_p": gc.top_p,
            "top_k": gc.top_k if gc.top_k else -1,
            "min_p": gc.min_p or 0.0,
            "repetition_penalty": gc.repetition_penalty,
            "logprobs": 0,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            "skip_special_tokens": False,
        }
        response = self._request("/v1/completions", payload)
        choices = sorted(response["choices"], key=lambda c: c["index"])
        ids, logps = [], []
        for choice in choices:
            lp = choice.get("logprobs") or {}
            tokens = choice.get("token_ids")
            if tokens is None:
                tokens = [int(t.split(":", 1)[1]) for t in lp.get("tokens", [])]
            ids.append(list(tokens))
            logps.append([float("nan") if x is None else float(x) for x in lp.get("token_logprobs", [])])
        return ids, logps

    # ---------------------------------------------------------------------------------------------- weights
    def maybe_sync_weights(self, trainer: Any) -> None:
        """After each optimizer step, push a PEFT adapter to the server (see the module docstring)."""
        step = trainer.state.global_step
        if step == self._synced_step:
            return
        self._synced_step = step
        model = trainer.accelerator.unwrap_model(trainer.model)
        if not _model.is_peft_model(model):
            return
        name = f"policy-step-{step}"
        if trainer.accelerator.is_main_process:
            if self.lora_dir is None:
                self.lora_dir = tempfile.mkdtemp(prefix="reference_impl_lora_")
            path = os.path.join(self.lora_dir, name)
            model.save_pretrained(path)
            self._request("/v1/load_lora_adapter", {"lora_name": name, "lora_path": path})
        trainer.accelerator.wait_for_everyone()
        self._lora_name = name
