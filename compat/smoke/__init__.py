"""`compat.smoke`: prove that a (migrated) training script still runs, in seconds, on a CPU.

`run(path, args=(), timeout=300) -> SmokeResult` runs the script unchanged in a child process where every heavy thing it
loads is a tiny stand-in (models, tokenizers, datasets, pipelines), every TrainingArguments/TRL config is clamped to two
CPU steps that write only to a temp dir, and the network is off. `python -m compat.smoke script.py [-- args]` is the
command line (`compat.smoke.cli.main`). Importing this package is cheap: torch/transformers load only in the child.
"""

from compat.smoke.runner import SmokeResult, run

__all__ = ["SmokeResult", "run"]
