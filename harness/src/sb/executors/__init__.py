"""Executors: where gradings run (a plugin, `register_executors`). Built in: `local`
(threads on this machine, the default) and `ray` (a Ray cluster, an optional extra)."""

from sb.executors.base import Executor, Work, available_executors, choose_executor, perform

__all__ = ["Executor", "Work", "available_executors", "choose_executor", "perform"]
