"""Every extension point of scratchbench, in one place.

Each hook takes a `register` callback rather than returning values, so the host can check
every registration as it happens (a duplicate name raises, naming both distributions).
Built-ins implement these hooks exactly as a third-party package does.
"""

import pluggy

hookspec = pluggy.HookspecMarker("sb")
hookimpl = pluggy.HookimplMarker("sb")


@hookspec
def register_tasks(register):
    """Register tasks: call `register(task)` once per `sb.Task`.

    Called when the plugin manager is first asked for tasks. A task package usually does
    `register(load_packaged_task(__name__))`.
    """


@hookspec
def register_models(register):
    """Register model adapters: call `register(adapter)` once per `sb.ModelAdapter`.

    An adapter claims model names (an exact name, prefixes, or the `adapter:model` form)
    and creates a solver for the chosen name.
    """


@hookspec
def register_sandboxes(register):
    """Register sandboxes: call `register(sandbox_class)` once per `sb.Sandbox` subclass.

    The class's `name` is what `--isolation NAME` selects; `unavailable_reason()` tells
    whether it can run on this machine.
    """


@hookspec
def register_executors(register):
    """Register executors: call `register(executor_class)` once per `sb.executors.Executor`
    subclass.

    The class's `name` is what `--executor NAME` selects; `unavailable_reason()` tells
    whether it can run here (its extra is installed). An executor grades units of work
    (`sb.executors.Work`, plain data) wherever it likes and returns each result as a dict;
    model calls and results files stay with the driver.
    """


@hookspec
def register_reporters(register):
    """Register result reporters: call `register(reporter)` once per `sb.Reporter`.

    A reporter receives every finished run's results document (after it is written) and
    may publish it elsewhere: a dashboard, a database, a chat message. One marked `opt_in`
    runs only when `sb run --report NAME[:ARG]` names it (the built-in `inspect`).
    """
