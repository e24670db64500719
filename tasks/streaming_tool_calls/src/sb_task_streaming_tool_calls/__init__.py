"""scratchbench task package: streaming_tool_calls."""
from sb import hookimpl, load_packaged_task


@hookimpl
def register_tasks(register):
    register(load_packaged_task(__name__))
