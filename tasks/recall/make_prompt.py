"""Generate the recall task's prompt.md, answer and reference reply from a seed.

    python make_prompt.py            # writes the files into src/sb_task_recall/

The context is a facilities log of a few thousand entries (tens of thousands of tokens).
Exactly one entry sets the code of the asked locker; it sits at DEPTH (0.5 = the middle).
Near misses make a sloppy recall wrong rather than vague: the same locker number in the
other buildings, the neighbouring lockers in the same building, and many other codes.
"""
import pathlib
import random

SEED = 20260301
DEPTH = 0.5
ENTRIES = 1500
BUILDINGS = ("North", "South", "East", "West", "Annex")
PEOPLE = ("R. Okafor", "M. Lindqvist", "J. Alvarez", "T. Nakamura", "P. Dubois", "S. Mehta",
          "A. Kowalski", "L. Haddad", "D. Moreau", "K. Osei", "E. Rossi", "H. Sato")
TARGET_BUILDING, TARGET_LOCKER = "East", 2718
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY3479"  # no look-alikes (0/O, 1/I/L, 5/S, 8/B, 2/Z, 6)

PACKAGE = pathlib.Path(__file__).parent / "src" / "sb_task_recall"


def make_code(rng):
    return "".join(rng.choice(CODE_ALPHABET) for _ in range(4)) + "-" + \
        "".join(rng.choice(CODE_ALPHABET) for _ in range(4))


def timestamp(rng, index):
    day, minute = divmod(index * 7 + rng.randrange(7), 24 * 60 // 8)
    return f"2025-{1 + day // 28:02d}-{1 + day % 28:02d} {6 + minute // 60 % 14:02d}:{minute % 60:02d}"


def filler(rng):
    building = rng.choice(BUILDINGS)
    room = f"{rng.randint(1, 6)}{rng.randint(0, 3)}{rng.randint(0, 9)}"
    person = rng.choice(PEOPLE)
    return rng.choice([
        f"{person} replaced the ceiling light in room {room}, {building} building; the old fitting was flickering since Monday.",
        f"Delivery of {rng.randint(2, 40)} boxes of printer paper signed for by {person} at the {building} loading bay.",
        f"{person} reported a dripping tap in the second-floor kitchen of {building}; plumber booked for {rng.choice(['Tuesday', 'Thursday', 'next week'])}.",
        f"Fire door on the stairwell of {building} found propped open again; {person} removed the wedge and left a note.",
        f"{person} checked the heating in room {room}, {building} building: thermostat reset to 21 degrees.",
        f"Badge reader at the {building} side entrance rebooted by {person} after it stopped accepting cards.",
        f"{person} logged a broken chair in room {room}, {building} building, and moved it to the storage cage.",
        f"Window cleaning of the {building} building postponed by {person} because of the wind forecast.",
    ])


def locker_entry(rng, building, locker, code):
    person = rng.choice(PEOPLE)
    return rng.choice([
        f"{person} set the code of locker {locker} in the {building} building to {code}.",
        f"Locker {locker}, {building} building: new code {code}, set by {person} after the tenant moved.",
        f"{person} reprogrammed locker {locker} ({building} building); its code is now {code}.",
    ])


def build():
    rng = random.Random(SEED)
    used_codes = set()

    def fresh_code():
        while True:
            code = make_code(rng)
            if code not in used_codes:
                used_codes.add(code)
                return code

    answer = fresh_code()
    near_misses = [(b, TARGET_LOCKER) for b in BUILDINGS if b != TARGET_BUILDING]
    near_misses += [(TARGET_BUILDING, TARGET_LOCKER + d) for d in (-2, -1, 1, 2, 10, 100)]
    other_lockers = [(rng.choice(BUILDINGS), rng.randint(1000, 3999)) for _ in range(300)]
    other_lockers = [key for key in other_lockers if key != (TARGET_BUILDING, TARGET_LOCKER)]
    bodies = []
    for index in range(ENTRIES):
        if rng.random() < 0.3:
            building, locker = rng.choice(other_lockers)
            bodies.append(locker_entry(rng, building, locker, fresh_code()))
        else:
            bodies.append(filler(rng))
    target_index = int(ENTRIES * DEPTH)
    bodies[target_index] = locker_entry(rng, TARGET_BUILDING, TARGET_LOCKER, answer)
    distractor_codes = {}
    free = [i for i in range(ENTRIES) if abs(i - target_index) > 5]
    for key in near_misses:
        spot = rng.choice(free)
        free.remove(spot)
        distractor_codes[key] = fresh_code()
        bodies[spot] = locker_entry(rng, *key, distractor_codes[key])
    lines = [f"[{timestamp(rng, i)}] {body}" for i, body in enumerate(bodies)]
    return lines, answer, target_index, distractor_codes


PROMPT_HEAD = """# Find one entry in a long log

Below is the facilities log of an office campus for 2025: one entry per line, oldest first.
Each locker is identified by its number AND its building: locker numbers repeat across
buildings.

Question: **what code was set for locker {locker} in the {building} building?**

Your answer is the file `reply.md` (when you answer in a chat, the text of your reply is
saved verbatim as that file). It must hold the code only, exactly as it appears in the log
(four characters, a hyphen, four characters), and nothing else: no sentence, no quotes, no
backticks, no Markdown. Surrounding whitespace and a final newline are ignored.

## The log

"""

PROMPT_TAIL = """
## Again, the question

What code was set for locker {locker} in the {building} building? Answer with that code
only.
"""


def main():
    lines, answer, target_index, distractors = build()
    fields = {"locker": TARGET_LOCKER, "building": TARGET_BUILDING}
    prompt = PROMPT_HEAD.format(**fields) + "\n".join(lines) + "\n" + PROMPT_TAIL.format(**fields)
    (PACKAGE / "prompt.md").write_text(prompt, encoding="utf-8")
    (PACKAGE / "reference" / "reply.md").write_text(answer + "\n", encoding="utf-8")
    (PACKAGE / "hidden_tests" / "_answer.py").write_text(
        '"""Generated by make_prompt.py: do not edit."""\n'
        f"ANSWER = {answer!r}\n"
        f"TARGET_LINE = {target_index}  # 0-based index among {len(lines)} log lines\n"
        f"NEAR_MISS_CODES = {sorted(distractors.values())!r}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
