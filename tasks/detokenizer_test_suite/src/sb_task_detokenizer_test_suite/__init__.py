"""scratchbench task package: detokenizer_test_suite."""
from sb import hookimpl, load_packaged_task


@hookimpl
def register_tasks(register):
    register(load_packaged_task(__name__))
