"""transformers 4.52 removed the agents API and with it `load_tool` (atlas: `transformers.load_tool` last in 4.51;
`transformers.tools` 4.29-4.40, `transformers.agents` 4.41-4.51). Nothing in transformers 4.56.2 or 5.x replaces it.

PPO-era code used it with TRL's `TextEnvironment` (TRL 0.7-0.20 `examples/research_projects/tools/`:
`load_tool("lvwerra/python-interpreter")`, `load_tool("ybelkada/simple-calculator")`), which TRL removed in 0.21
(rule `removed-text-environment`). Tools are now plain Python functions passed to GRPO as `tools=[...]` or called
from a reward function; the Hub tool repos were Spaces loaded with remote code. Marked, never rewritten.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_PATHS = ("transformers.load_tool", "transformers.tools.load_tool", "transformers.agents.load_tool")
MESSAGE = ("load_tool was removed in transformers 4.52 (no successor): write the tool as a Python function "
           "(GRPOTrainer(tools=[...]) or a reward function); the TRL TextEnvironment that used it is gone too")


class RemovedLoadTool(SymbolMigration):
    summary = "transformers.load_tool (agents API, removed in 4.52; no successor): TODO"
    triggers = ("load_tool",)
    requires = ("transformers",)
    removed_modules = {"transformers.tools": MESSAGE, "transformers.agents": MESSAGE}
    symbols = {q: Gone(MESSAGE) for q in _PATHS}


MIGRATION = RemovedLoadTool()
