"""scratchbench inside Inspect AI: `inspect eval sb_inspect/scratchbench -T tasks=a,b --model <provider/model>`.

Each installed scratchbench task is one sample whose input is exactly what `sb run` sends;
the scorer grades the reply with scratchbench's own grader in its sandbox. Only the public
API of `sb` (`sb.__all__`) is used. See docs/inspect.md.
"""

from sb_inspect.offline import sb_offline
from sb_inspect.scoring import measured, pass_rate, pass_rate_over_epochs, sb_grader
from sb_inspect.task import answer_once, scratchbench

__all__ = ["answer_once", "measured", "pass_rate", "pass_rate_over_epochs", "sb_grader", "sb_offline",
           "scratchbench"]
