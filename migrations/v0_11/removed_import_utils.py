"""removed-import-utils: `trl.is_npu_available` / `trl.is_xpu_available` (gone in TRL 0.11) -> their successors.

TRL 0.8 - 0.10 exported both from `trl` and `trl.import_utils` (read from the 0.10.1 and 0.11.0 wheels):
* `is_npu_available()` checked `torch_npu` importable and `torch.npu.is_available()`: what transformers'
  `transformers.utils.is_torch_npu_available()` checks with its default `check_device=False`;
* `is_xpu_available()` returned `accelerate.utils.is_xpu_available()` whenever accelerate >= 0.20 was installed, which
  every supported target guarantees (its floor is accelerate 1.10+), so the import moves there;
* the package probes `is_peft_available`, `is_bitsandbytes_available`, `is_torchvision_available`, `is_pil_available`,
  `is_sklearn_available`, `is_openai_available` (gone in 0.11; read from the 0.9.6 and 0.10.1 wheels),
  `is_rich_available` (0.18) were `find_spec(...)` checks: they move to
  transformers' probes of the same packages (`is_pil_available` -> `is_vision_available`; each exported by
  `transformers.utils` in the 4.56.2 wheel and the installed transformers, a test reads both), which answer the same
  for an installed package (they read its metadata instead of its import spec);
* the probes TRL 1.11 removed, `is_fastapi_available`, `is_pydantic_available`, `is_uvicorn_available`,
  `is_vllm_ascend_available` (its vLLM server's checks; no `transformers.utils` export for the first three, only
  its `import_utils` module holds them), and `is_llm_blender_available` (removed in 1.2; 0.10 - 0.11 called it
  `is_llmblender_available`) move to `compat.trl` copies of TRL 1.0.0's checks (`find_spec(...)`; willccbb/verifiers);
* `is_wandb_available` (a `find_spec("wandb")` check; transformers' function has other semantics: it honours
  `WANDB_DISABLED`) moves to `compat.trl.is_wandb_available`, a copy of that check; `is_diffusers_available` (0.24;
  transformers 4.56 has no probe of that package, 5.x exports one) to `compat.trl.is_diffusers_available`, a copy;
* `is_torch_greater_2_0` (gone in 0.12) moves to `compat.trl.is_torch_greater_2_0`, a copy of the 0.11 check (the
  torch version string compared with "2.0" as a string; True on every target: TRL 1.13+ needs accelerate >= 1.4,
  which needs torch >= 2.0);
* marked, no successor: the version probes `is_transformers_greater_than`, `is_accelerate_greater_20_0` (gone in
  0.12): compare `packaging.version` yourself, or drop the check (every target's floors are above those versions).
The package probes and `is_wandb_available` were also exported from `trl` itself (`is_peft_available` since 0.4,
the others from 0.6-0.7 on; `is_rich_available` from 0.14 to 0.16), re-exports of the same `trl.import_utils`
functions (read from the 0.4.7, 0.6.0, 0.7.11, 0.8.6, 0.9.6, 0.10.1, 0.14.0 and 0.16.1 wheels' `trl/__init__.py`), so
`from trl import is_wandb_available` / `trl.is_peft_available()` move the same way.
Most of these went away in 0.11, hence the folder; the table notes the others.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, Moved, SymbolMigration

_NPU = "removed from TRL in 0.11; transformers' function does the same check"
_XPU = "removed from TRL in 0.11; TRL's function returned accelerate's with accelerate >= 0.20"


# TRL probe -> (transformers.utils probe of the same package, the TRL release that removed it)
_PROBES = {
    "is_peft_available": ("is_peft_available", "0.11"),
    "is_bitsandbytes_available": ("is_bitsandbytes_available", "0.11"),
    "is_torchvision_available": ("is_torchvision_available", "0.11"),
    "is_pil_available": ("is_vision_available", "0.11"),
    "is_rich_available": ("is_rich_available", "0.18"),
    "is_sklearn_available": ("is_sklearn_available", "0.11"),
    "is_openai_available": ("is_openai_available", "0.11"),
}
# probes of TRL's vLLM server, removed in 1.11 (atlas: in trl.import_utils 0.16 - 1.10): name -> the release
_LATE_PROBES = {"is_fastapi_available": "1.11", "is_pydantic_available": "1.11", "is_uvicorn_available": "1.11",
                "is_vllm_ascend_available": "1.11"}
_VERSION_MSG = "removed in TRL 0.12: compare packaging.version yourself, or drop it (the floors are above it)"
_GONE = {
    "is_transformers_greater_than": _VERSION_MSG,
    "is_accelerate_greater_20_0": _VERSION_MSG,
}


class RemovedImportUtils(SymbolMigration):
    summary = "trl.import_utils probes (is_npu/xpu/peft_available, ..., removed in 0.11+) -> transformers/accelerate"
    triggers = ("import_utils", "is_npu_available", "is_xpu_available", "is_wandb_available", "is_diffusers_available",
                "is_llm_blender_available", "is_llmblender_available", *_PROBES)
    symbols = {
        **{p: Moved("transformers.utils", "is_torch_npu_available", _NPU)
           for p in ("trl.is_npu_available", "trl.import_utils.is_npu_available")},
        **{p: Moved("accelerate.utils", "is_xpu_available", _XPU)
           for p in ("trl.is_xpu_available", "trl.import_utils.is_xpu_available")},
        **{f"{home}.{old}": Moved("transformers.utils", new, f"removed from TRL in {release}; "
                                  "transformers probes the same package")
           for old, (new, release) in _PROBES.items() for home in ("trl", "trl.import_utils")},
        **{f"trl.import_utils.{name}": Gone(message) for name, message in _GONE.items()},
        **{f"{home}.is_wandb_available": Moved("compat.trl", "is_wandb_available", "removed from TRL in 0.11; "
                                               "compat.trl keeps its find_spec('wandb') check")
           for home in ("trl", "trl.import_utils")},
        **{f"{home}.is_diffusers_available": Moved("compat.trl", "is_diffusers_available", "removed from TRL in 0.24; "
                                                   "compat.trl keeps its check (transformers 4.56 has no such probe)")
           for home in ("trl", "trl.import_utils")},
        **{f"trl.import_utils.{name}": Moved("compat.trl", name, f"removed from TRL in {release}; compat.trl keeps "
                                             "its find_spec check")
           for name, release in _LATE_PROBES.items()},
        **{f"{home}.{old}": Moved("compat.trl", "is_llm_blender_available", f"removed from TRL in {release}; "
                                  "compat.trl keeps its find_spec('llm_blender') check")
           for home in ("trl", "trl.import_utils")
           for old, release in (("is_llm_blender_available", "1.2"), ("is_llmblender_available", "0.12"))},
        "trl.import_utils.is_torch_greater_2_0": Moved("compat.trl", "is_torch_greater_2_0", "removed from TRL in 0.12; "
                                                       "compat.trl keeps its torch version check"),
    }


MIGRATION = RemovedImportUtils()
