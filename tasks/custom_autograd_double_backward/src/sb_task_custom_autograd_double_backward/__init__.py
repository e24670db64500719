"""scratchbench task package: custom_autograd_double_backward."""
from sb import hookimpl, load_packaged_task


@hookimpl
def register_tasks(register):
    register(load_packaged_task(__name__))
