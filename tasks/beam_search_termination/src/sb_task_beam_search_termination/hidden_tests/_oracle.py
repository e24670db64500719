"""The search written out from the prompt's definitions, without early stopping.

`full_search` runs every step up to max_new_tokens and keeps every state; the stopping step
is then found by asking, for each step, whether any running hypothesis could still finish
above the worst of the num_beams best finished ones, by trying every length it could finish
at (no closed form, no case split on the sign of the penalty). `exhaustive` scores every
possible sequence and knows nothing of beams at all.
"""
import itertools


def score(total, length, length_penalty):
    return total / (length**length_penalty)


def best(finished, num_beams):
    """finished: [(tokens, total, score)] in finish order -> the num_beams best, ranked."""
    order = sorted(range(len(finished)), key=lambda i: (-finished[i][2], i))
    return [finished[i] for i in order[:num_beams]]


def full_search(model, bos, eos, num_beams, max_new_tokens, length_penalty):
    """[(running after step t, finished after step t)] for t = 1 .. max_new_tokens."""
    running = [((), 0.0)]
    finished = []
    states = []
    for t in range(1, max_new_tokens + 1):
        rows = [model.row((bos,) + tokens) for tokens, _ in running]
        candidates = []
        for b, (tokens, total) in enumerate(running):
            for v, lp in enumerate(rows[b]):
                candidates.append(((-(total + float(lp)), b, v), tokens + (v,), total + float(lp)))
        candidates.sort(key=lambda c: c[0])
        kept = []
        for _, tokens, total in candidates:
            if len(kept) >= num_beams:
                break
            if tokens[-1] == eos:
                finished.append((tokens, total, score(total, t, length_penalty)))
            else:
                kept.append((tokens, total))
                if t == max_new_tokens:
                    finished.append((tokens, total, score(total, t, length_penalty)))
        running = kept
        states.append((list(running), list(finished)))
    return states


def could_still_win(total, length, worst, max_new_tokens, length_penalty):
    """Some finish length and later log-probs all 0 give a score above worst."""
    return any(
        score(total, final, length_penalty) > worst
        for final in range(length + 1, max_new_tokens + 1)
    )


def stop_step(states, num_beams, max_new_tokens, length_penalty):
    for t, (running, finished) in enumerate(states, start=1):
        if t == max_new_tokens:
            return t
        if len(finished) < num_beams:
            continue
        worst = best(finished, num_beams)[-1][2]
        if not any(
            could_still_win(total, t, worst, max_new_tokens, length_penalty)
            for _, total in running
        ):
            return t
    raise AssertionError("unreachable")


def expected(model, bos, eos, num_beams, max_new_tokens, length_penalty):
    """(result as [(tokens, score)], number of step calls, prefixes of every call)."""
    states = full_search(model, bos, eos, num_beams, max_new_tokens, length_penalty)
    stop = stop_step(states, num_beams, max_new_tokens, length_penalty)
    final = best(states[-1][1], num_beams)
    # The stopping rule's own promise: stopping there changes nothing.
    assert best(states[stop - 1][1], num_beams) == final
    calls = [[(bos,)]] + [[(bos,) + tokens for tokens, _ in states[t][0]] for t in range(stop - 1)]
    return [(list(tokens), s) for tokens, _, s in final], stop, calls


def exhaustive(model, bos, eos, max_new_tokens, length_penalty):
    """Every finished sequence there is, scored: [(tokens, score)], best first."""
    others = [v for v in range(model.vocab_size) if v != eos]
    out = []
    for n in range(max_new_tokens + 1):
        for body in itertools.product(others, repeat=n):
            endings = [body + (eos,)] if n < max_new_tokens else []
            if n == max_new_tokens:
                endings.append(body)
            for tokens in endings:
                total = 0.0
                for i, v in enumerate(tokens):
                    total += float(model.row((bos,) + tokens[:i])[v])
                out.append((list(tokens), score(total, len(tokens), length_penalty)))
    out.sort(key=lambda item: -item[1])
    return out
