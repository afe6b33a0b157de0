"""The phases of a turn, run in order by assistant.loop (its docstring lists them)."""
