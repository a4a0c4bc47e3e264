"""removed-script-field-flags: `--torch_dtype` (and `--gradient_checkpointing_use_reentrant`) on command lines of a
script whose parser holds TRL's `ModelConfig` / `ScriptArguments`, gone in TRL 0.27.

The command-line side of `removed-script-fields`: in shell launchers and the fenced blocks of Markdown files, a
command running such a script (resolved next to the file or above it, read as committed; the parser's classes and
the fields they have on the target from the atlas) gets `--torch_dtype` -> `--dtype` (the same option; the parser
rejects the old flag, "Some specified arguments are not used by the HfArgumentParser"), and a marker above it for
`--gradient_checkpointing_use_reentrant`. Flags the target parser accepts (a script's own dataclass may declare
`torch_dtype`) are left alone.
"""

from __future__ import annotations

from migrations.kinds.script_fields import ScriptFieldFlags


class RemovedScriptFieldFlags(ScriptFieldFlags):
    summary = "--torch_dtype -> --dtype in shell/README commands of a ModelConfig script; " \
              "--gradient_checkpointing_use_reentrant marked"
    order = 62


MIGRATION = RemovedScriptFieldFlags()
