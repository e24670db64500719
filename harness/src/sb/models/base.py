"""The ModelAdapter interface and name routing.

A model name is routed by what the registered adapters claim: `adapter:model` picks an
adapter explicitly; otherwise exactly one adapter must claim the name. No adapter is
named anywhere in the core, so a third-party adapter is a plugin like the built-ins.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from sb.errors import SbError
from sb.outcome import Status


@dataclass
class ModelOptions:
    """What the user set. Unset knobs are never sent; set ones are recorded in results."""

    base_url: str | None = None
    settings: dict = field(default_factory=dict)  # temperature, max_tokens, effort... only if the user set them
    timeout_s: float = 600.0


@dataclass
class Attempt:
    """One model attempt at one task: whether it produced files, and what it cost."""

    status: Status | None = None          # None: the solver left files to grade
    detail: str = ""
    model_answered: str | None = None
    usage: dict | None = None             # input, output, cache_read, cache_write, reasoning tokens
    usd_cost: float | None = None
    transport_retries: int = 0
    dropped_files: list = field(default_factory=list)
    price: str | None = None              # the dated price used ("anthropic claude-x as of ..."), or "unpriced"
    exit_status: int | None = None        # an external agent's exit status (cmd:)
    transport_failure: bool = False       # the call failed in transport (after its retries): no answer at all
    usage_missing: bool = False           # a priced model answered without usage: the cost is unknown, not zero
    turn_costs: list = field(default_factory=list)  # a tool loop's turns: {model, tokens, usd_cost} each
    agent_stderr: str | None = None       # what an external agent (cmd:) wrote to stderr, its last AGENT_STDERR_BYTES

    @property
    def produced_files(self) -> bool:
        return self.status is None


class ToolSession(ABC):
    """One tool-calling conversation an adapter holds for the harness: `sb.toolloop` calls
    `step` with the results of the previous turn's calls and records every turn itself."""

    provider: str = ""                  # the price table's key; '' for a scripted session (nothing billed)
    model_answered: str | None = None   # as the API named it, once it has answered
    transport_retries: int = 0          # every retry of every turn

    @abstractmethod
    def step(self, results: list):
        """Send the previous calls' results (`[(call id, text), ...]`), return the ModelTurn."""


class ModelAdapter(ABC):
    """What the harness uses of a model adapter: every attribute and method is declared here."""

    name: ClassVar[str] = ""
    routes: ClassVar[str] = ""          # what names it claims, for `sb models`
    extra: ClassVar[str | None] = None  # the pip extra it needs, if any
    provider: ClassVar[str] = ""        # the price table's key; '' when nothing is billed
    trusted: ClassVar[bool] = False     # its output is the task's own code (the controls): may skip isolation
    leaves_starter: ClassVar[bool] = False  # it writes nothing, tool_loop tasks included (the starter control)
    supports_tool_loops: ClassVar[bool] = False  # `tool_session` works
    uses_base_url: ClassVar[bool] = False  # it calls a server, so --base-url means something to it
    uses_settings: ClassVar[bool] = True  # --temperature, --seed, --timeout... reach a model (not the controls)

    def claims(self, model: str) -> bool:
        return model == self.name

    def installed(self) -> bool:
        return True

    def preflight(self, model: str, options: ModelOptions) -> None:
        """Raise SbError before any task starts when the run cannot work at all (no key, no
        base URL, an unsupported setting): one line, instead of N identical adapter_errors."""

    @abstractmethod
    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        """Leave the solution's files in `workdir` (which holds the starter files)."""

    def endpoint(self, options: ModelOptions) -> str | None:
        """The server this adapter will actually talk to (None: no server, as for the controls)."""
        return None

    def official_endpoint(self) -> str | None:
        """The provider's own API (None: every endpoint is the user's own, as for local servers)."""
        return None

    def key_rejected(self, options: ModelOptions) -> str:
        """Why the API refused the key these options use (HTTP 401 or 403), in one line, once it
        has; '' before. The sweep stops at once on it, every sweep of that adapter, endpoint and
        key with it: each later request would be refused too, and the tasks not yet asked are
        left for --resume, never recorded as adapter_error."""
        return ""

    def tool_session(self, model: str, task, tools: list, options: ModelOptions) -> ToolSession:
        """A conversation for a tool_loop task (only when `supports_tool_loops`)."""
        raise SbError(f"the {self.name} adapter cannot drive tool loops")


def registered_adapters(pm) -> dict:
    from sb.plugins import collect
    return collect(pm, "register_models", "model adapter", lambda a: a.name).items


def resolve_model(name: str, pm) -> tuple[ModelAdapter, str]:
    """(adapter, model id) for a user's --model value; SbError when none or several claim it."""
    adapters = registered_adapters(pm)
    prefix, sep, rest = name.partition(":")
    if sep and prefix in adapters:
        return _installed(adapters[prefix], name), rest
    claimants = [a for a in adapters.values() if a.claims(name)]
    if not claimants:
        raise SbError(f"unknown model {name!r}: no adapter claims it (see `sb models`)")
    if len(claimants) > 1:
        names = ", ".join(sorted(a.name for a in claimants))
        raise SbError(f"model {name!r} is claimed by several adapters ({names}); write ADAPTER:{name}")
    return _installed(claimants[0], name), name


def _installed(adapter: ModelAdapter, name: str) -> ModelAdapter:
    """A missing optional SDK is one line naming the extra, before any task starts."""
    if not adapter.installed():
        raise SbError(f"model {name!r} needs the {adapter.name} adapter's SDK: "
                      f"`make install-sdk` in the checkout, pinned by its lock "
                      f"(or pip install 'scratchbench[{adapter.extra}]')")
    return adapter
