"""The judge's side of grading the solver's test_chat_template.py: sb.solver_tests runs it once
per implementation of chat_template (_good/NAME/chat_template.py, _buggy/NAME/chat_template.py),
and a buggy version counts as caught only when the run failed AND the judge's own record shows
a call on which that version behaves differently from the correct one. What is particular to
this task: results compare exactly, an exception by its type alone (see `alike`), a model of
the contract written apart from every implementation, and a battery of calls over the
documented domain that the guards for the grader itself use."""
import functools
import pathlib
import random

from sb.solver_tests import SolverTests, behaviour, exact_form

BEGIN, START, END, SEP = 256, 257, 258, 259
ROLES = ("system", "user", "assistant", "tool")


def alike(a: tuple, b: tuple) -> bool:
    """Two behaviours alike: the same exception type (its text is free), or the same result
    exactly: a list of the same ints (the arguments are copies, so nothing written counts)."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    return exact_form(a[1]) == exact_form(b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_chat_template.py", module="chat_template",
                    functions=("encode_chat",), alike=alike,
                    run_order_seed=1,  # checked by the grader's own guard: a buggy version runs first, the correct ones apart
                    max_calls=1000,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="segments")
# The runs that must not depend on an earlier one: buggy versions that depart on many calls
# (any content with surrounding whitespace; any call with a generation prompt), so what a run
# records differs.
STANDALONE_BUGGY = ("content_stripped", "end_dropped_before_generation_prompt")


# ---------------------------------------------------------------------------------------
# A model of the contract, written apart from every implementation: the ids by the byte
# values of UTF-8 as Python's codec gives them, and for a call that breaks rules, the set of
# exception types it may raise (which one, when several rules are broken, is unspecified).

def model(messages, add_generation_prompt=False):
    allowed = set()
    for position, message in enumerate(messages):
        if type(message) is not dict:
            allowed.add("TypeError")
            continue
        if len(message) != 2 or "role" not in message or "content" not in message:
            allowed.add("ValueError")
            continue
        role, content = message["role"], message["content"]
        if type(role) is not str:
            allowed.add("TypeError")
        elif role not in ROLES or (role == "system" and position > 0):
            allowed.add("ValueError")
        if type(content) is not str:
            allowed.add("TypeError")
    if allowed:
        return ("raises", allowed)
    ids = [BEGIN]
    for message in messages:
        ids += [START, *message["role"].encode("utf-8"), SEP, *message["content"].encode("utf-8"), END]
    if add_generation_prompt:
        ids += [START, *b"assistant", SEP]
    return ("returns", ids)


def keeps_the_model(seen: tuple, want: tuple) -> bool:
    if want[0] == "raises":
        return seen[0] == "raises" and seen[1] in want[1]
    return seen[0] == "returns" and exact_form(seen[1]) == exact_form(want[1])


# ---------------------------------------------------------------------------------------
# The battery: calls on the documented domain.

def _m(role, content):
    return {"role": role, "content": content}


def _chat(*contents, generation=False, roles=("user", "assistant")):
    messages = [_m(roles[i % len(roles)], c) for i, c in enumerate(contents)]
    return ("encode_chat", (messages,), {"add_generation_prompt": generation})


TRICKY_CONTENTS = [
    "", " ", "hello", "  padded  ", "\n", "line\n", "a\r\nb", "a\rb", "tab\there", "e\u0301", "\u00e9",
    "\u212b", "\ufb01", "\ufeffBOM first", "mid\ufeffBOM", "\x00", "a\x00b", "\x1b[31mred", "\x7f", "nbsp\u00a0x",
    "\u2028\u2029", "zwj \U0001F468\u200d\U0001F469", "soft\u00adhyphen", "\U0001F600", "\U00010000\U0010FFFF",
    "\u0800\u07ff\u0080\u007f\uffff", "<|end|>", "<|begin|>", "x<|start|>y<|sep|>z", "<|end|", "<|END|>",
    "\ue000", "\ue001\ue002\ue003", "\uf8ff", "{role}", "C:\\new\\table", "\\", "100%", "&lt;<b>",
    "\u3000ideographic", "\u0130", "\u00df", "ﬀ",
]


def hand_calls() -> list:
    calls = []
    for content in TRICKY_CONTENTS:
        calls.append(_chat(content))
        calls.append(_chat("hi", content, generation=True))
    for generation in (False, True):
        calls += [
            ("encode_chat", ([],), {"add_generation_prompt": generation}),
            ("encode_chat", ([_m("system", "be brief"), _m("user", "hi")],), {"add_generation_prompt": generation}),
            ("encode_chat", ([_m("user", "hi"), _m("assistant", "hello")],), {"add_generation_prompt": generation}),
            ("encode_chat", ([_m("user", "hi"), _m("assistant", "")],), {"add_generation_prompt": generation}),
            ("encode_chat", ([_m("user", "")],), {"add_generation_prompt": generation}),
            ("encode_chat", ([_m("tool", '{"temp": 21}'), _m("assistant", "ok")],),
             {"add_generation_prompt": generation}),
        ]
    calls.append(("encode_chat", ([_m("user", "hi")],), {}))
    # broken rules, one at a time
    for role in ("", "sys", "use", "User", "ASSISTANT", " user", "user ", "tool\n", "bot", "function", "developer",
                 "assistant\x00", "t"):
        calls.append(("encode_chat", ([_m(role, "x")],), {}))
    for role in (None, 1, b"user", ["user"]):
        calls.append(("encode_chat", ([_m(role, "x")],), {}))
    for content in (None, 0, b"bytes", ["part"], [{"type": "text", "text": "hi"}], {"text": "hi"}, 1.5):
        calls.append(("encode_chat", ([_m("user", content)],), {}))
    for message in ({"role": "user"}, {"content": "x"}, {}, {"role": "user", "content": "x", "name": "bob"},
                    {"role": "tool", "content": "{}", "tool_call_id": "7"}, {"Role": "user", "content": "x"}):
        calls.append(("encode_chat", ([message],), {}))
    for message in ("user: hi", None, ["user", "hi"], ("user", "hi")):
        calls.append(("encode_chat", ([message],), {}))
    for messages in ([_m("user", "a"), _m("system", "b")], [_m("system", "a"), _m("system", "b")],
                     [_m("system", "a"), _m("user", "b"), _m("system", "c")],
                     [_m("system", "a"), _m("system", "b"), _m("user", "c")]):
        calls.append(("encode_chat", (messages,), {}))
        calls.append(("encode_chat", (messages,), {"add_generation_prompt": True}))
    # several rules broken at once
    calls.append(("encode_chat", ([_m(5, None)],), {}))
    calls.append(("encode_chat", ([_m("user", "ok"), _m("system", 3)],), {}))
    calls.append(("encode_chat", ([{"role": 1}, _m("bot", "x"), "junk"],), {}))
    return calls


ALPHABET = ["a", "b", " ", "\n", "\t", "é", "€", "😀", "<", "|", ">", "{", "}", "\\", "\r\n", "\x00", "\ufeff",
            "e\u0301", "\ue001", "\u200d", "\u00a0", "<|end|>", "<|sep|>", "x" * 7]


def random_calls(count: int) -> list:
    rng = random.Random(20261204)
    calls = []
    for _ in range(count):
        messages = []
        if rng.random() < 0.4:
            messages.append(_m("system", ""))
        for _ in range(rng.randrange(5)):
            messages.append(_m(rng.choice(("user", "assistant", "tool")), ""))
        for message in messages:
            message["content"] = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(8)))
        calls.append(("encode_chat", (messages,), {"add_generation_prompt": rng.random() < 0.5}))
    return calls


@functools.lru_cache(maxsize=None)
def battery() -> list:
    return hand_calls() + random_calls(400)


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: the buggy version departs somewhere on the documented domain."""
    return SUITE.differs_somewhere(name, battery())


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_model() -> list:
    """Guard for the grader itself: every correct implementation keeps the model of the contract
    on every call of the battery (the exact ids, or an exception of an allowed type). Returns
    the calls on which one does not, empty when none."""
    failures = []
    for name in SUITE.good:
        module = SUITE.load("good", name)
        for call in battery():
            _, args, kwargs = call
            if not keeps_the_model(behaviour(module, call), model(*args, **kwargs)):
                failures.append((name, call))
    return failures[:5]
