"""The committed prompt, answer and reference reply are exactly what make_prompt.py makes,
and the answer can be found in the prompt independently of the generator."""
import importlib.util
import pathlib
import re

TASK = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = TASK / "src" / "sb_task_recall"


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_prompt = _load("sb_task_recall_make_prompt", TASK / "make_prompt.py")
answer = _load("sb_task_recall_answer", PACKAGE / "hidden_tests" / "_answer.py")
PROMPT = (PACKAGE / "prompt.md").read_text(encoding="utf-8")
LOG = [line for line in PROMPT.splitlines() if line.startswith("[2025-")]


def test_prompt_is_generated_deterministically():
    lines, code, target, _ = make_prompt.build()
    assert lines == LOG
    assert code == answer.ANSWER and target == answer.TARGET_LINE
    assert (PACKAGE / "reference" / "reply.md").read_text().strip() == code


def test_exactly_one_entry_for_the_asked_locker_and_it_is_in_the_middle():
    """Independent of the generator: scan the text for every code set for East 2718."""
    hits = [(i, re.search(r"[A-Z0-9]{4}-[A-Z0-9]{4}", line).group())
            for i, line in enumerate(LOG)
            if re.search(r"[Ll]ocker 2718\b", line) and "East building" in line]
    assert hits == [(answer.TARGET_LINE, answer.ANSWER)]
    assert 0.45 < answer.TARGET_LINE / len(LOG) < 0.55


def test_context_is_tens_of_thousands_of_tokens():
    assert len(PROMPT.split()) > 20_000


def test_near_misses_are_present_in_the_prompt():
    for code in answer.NEAR_MISS_CODES:
        assert code in PROMPT and code != answer.ANSWER
