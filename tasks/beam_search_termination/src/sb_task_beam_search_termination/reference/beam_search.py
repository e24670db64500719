"""Beam search with a length penalty that stops at the first step nothing can change."""
import numpy as np


def _score(total, length, length_penalty):
    return total / (length**length_penalty)


def _best_reachable(total, length, max_new_tokens, length_penalty):
    """The best finished score a running hypothesis could still reach.

    Its sum can only fall (log-probabilities are <= 0) and it finishes at a length from
    length + 1 (EOS next) to max_new_tokens. A negative sum divided by L**p grows with L
    when p > 0, so the best length is the longest; when p < 0 it is the shortest.
    """
    best_length = max_new_tokens if length_penalty > 0 else length + 1
    return _score(total, best_length, length_penalty)


def _worst_kept(finished, num_beams):
    """Score of the num_beams-th best finished hypothesis, or None while there are fewer."""
    if len(finished) < num_beams:
        return None
    return sorted(score for score, _ in finished)[-num_beams]


def _rank(running, logp):
    """Candidates (sum, beam position, token), best first.

    They are built in (beam position, token) order and the sort is stable, so equal sums keep
    that order.
    """
    candidates = [
        (total + float(logp[b, v]), b, v)
        for b, (_, total) in enumerate(running)
        for v in range(logp.shape[1])
    ]
    candidates.sort(key=lambda c: -c[0])
    return candidates


def beam_search(step, bos, eos, num_beams, max_new_tokens, length_penalty):
    running = [((), 0.0)]  # (generated tokens, sum of their log-probabilities)
    finished = []  # (score, tokens) in finish order
    for t in range(1, max_new_tokens + 1):
        logp = np.asarray(step([[bos, *tokens] for tokens, _ in running]), dtype=np.float64)
        last = t == max_new_tokens
        next_running = []
        for total, b, v in _rank(running, logp):
            tokens = running[b][0] + (v,)
            if v == eos or last:
                finished.append((_score(total, len(tokens), length_penalty), tokens))
            if v != eos:
                next_running.append((tokens, total))
                if len(next_running) == num_beams:
                    break
        running = next_running
        worst = _worst_kept(finished, num_beams)
        if worst is not None and all(
            _best_reachable(total, t, max_new_tokens, length_penalty) <= worst
            for _, total in running
        ):
            break
    finished.sort(key=lambda f: -f[0])  # stable: equal scores stay in finish order
    return [(list(tokens), score) for score, tokens in finished[:num_beams]]
