import itertools
import json

import numpy as np
import pytest

from sb.judge import probe
from sampler import ShardedSampler, epoch_order

# Every check here is exact: the sampler produces integer indices, so there is no tolerance.
# Batches are read with comprehensions (`[b for b in s]`), never list(handle): the sampler
# lives in the solution's process and each batch is fetched by value.

CONFIGS = [
    # (num_samples, world_size, batch_size, drop_last)
    (24, 3, 4, False),   # divides evenly
    (24, 3, 4, True),    # divides evenly, nothing to drop
    (23, 4, 3, False),   # needs padding
    (23, 4, 3, True),    # drops the tail
    (50, 3, 5, True),
    (7, 2, 3, False),
    (1, 3, 2, False),    # padding wraps around many times
    (5, 1, 2, False),    # a single rank pads too
    (5, 1, 2, True),
    (9, 4, 1, False),    # batch_size 1
    (6, 6, 1, True),     # one sample per rank
]


def _sampler(num_samples, world_size, rank, batch_size, drop_last, seed=11, shuffle=True):
    return ShardedSampler(num_samples, world_size=world_size, rank=rank, batch_size=batch_size,
                          seed=seed, shuffle=shuffle, drop_last=drop_last)


def _order(num_samples, seed, epoch, shuffle=True):
    if shuffle:
        return [int(i) for i in np.random.default_rng([seed, epoch]).permutation(num_samples)]
    return list(range(num_samples))


def _spec_batches(num_samples, world_size, rank, batch_size, drop_last, seed, epoch, shuffle=True):
    """The stated layout, built by walking global positions one at a time."""
    order = _order(num_samples, seed, epoch, shuffle)
    step = world_size * batch_size
    num_batches = num_samples // step if drop_last else (num_samples + step - 1) // step
    batches = [[] for _ in range(num_batches)]
    for position in range(num_batches * step):
        if position % world_size == rank:
            local = position // world_size
            batches[local // batch_size].append(order[position % num_samples])
    return batches


def _take(sampler):
    """Every batch the sampler yields now, as the values it returned."""
    return [batch for batch in sampler]


def _as_lists(batches):
    return [list(b) for b in batches]


# ---------------------------------------------------------------- epoch_order

@pytest.mark.parametrize("seed,epoch", [(0, 0), (11, 3), (2024, 7)])
def test_epoch_order_uses_the_stated_generator(seed, epoch):
    expected = np.random.default_rng([seed, epoch]).permutation(37).tolist()
    assert list(epoch_order(37, seed, epoch)) == expected


@pytest.mark.parametrize("shuffle", [True, False])
def test_epoch_order_is_a_list_of_python_ints(shuffle):
    got = epoch_order(12, 3, 1, shuffle=shuffle)
    assert type(got) is list
    assert [type(i) for i in got] == [int] * 12
    assert got == _order(12, 3, 1, shuffle)


def test_epoch_order_without_shuffle_is_identity():
    assert list(epoch_order(9, 5, 4, shuffle=False)) == list(range(9))


def test_epoch_order_differs_across_epochs_and_seeds():
    a = list(epoch_order(40, 1, 0))
    assert sorted(a) == list(range(40))
    assert a != list(epoch_order(40, 1, 1))
    assert a != list(epoch_order(40, 2, 0))
    # seed + epoch is not the key: (1, 0) and (0, 1) are different epochs
    assert a != list(epoch_order(40, 0, 1))


# ---------------------------------------------------------------- construction

@pytest.mark.parametrize("kwargs", [
    dict(num_samples=0, world_size=2, rank=0, batch_size=1),
    dict(num_samples=-3, world_size=2, rank=0, batch_size=1),
    dict(num_samples=10, world_size=0, rank=0, batch_size=1),
    dict(num_samples=10, world_size=2, rank=0, batch_size=0),
    dict(num_samples=10, world_size=2, rank=2, batch_size=1),
    dict(num_samples=10, world_size=2, rank=5, batch_size=1),
    dict(num_samples=10, world_size=2, rank=-1, batch_size=1),
], ids=["no_samples", "negative_samples", "no_ranks", "empty_batches", "rank_eq_world", "rank_past_world",
        "negative_rank"])
def test_invalid_arguments_raise(kwargs):
    n = kwargs.pop("num_samples")
    with pytest.raises(ValueError):
        ShardedSampler(n, **kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(num_samples=1, world_size=1, rank=0, batch_size=1),
    dict(num_samples=4, world_size=3, rank=2, batch_size=7),
])
def test_smallest_valid_arguments_are_accepted(kwargs):
    n = kwargs.pop("num_samples")
    sampler = ShardedSampler(n, **kwargs)
    assert len(sampler) == 1


def test_defaults_are_seed_zero_shuffled_and_padded():
    sampler = ShardedSampler(num_samples=10, world_size=3, rank=2, batch_size=2)
    sampler.set_epoch(1)
    assert len(sampler) == 2
    assert _as_lists(_take(sampler)) == _spec_batches(10, 3, 2, 2, False, 0, 1, shuffle=True)
    assert list(epoch_order(10, 0, 1)) == _order(10, 0, 1, shuffle=True)


def test_a_new_sampler_starts_epoch_zero_at_its_first_batch():
    sampler = _sampler(17, 2, 1, 3, False)
    assert sampler.state_dict() == {"epoch": 0, "batches_consumed": 0}
    assert _as_lists(_take(sampler)) == _spec_batches(17, 2, 1, 3, False, 11, 0)


# ---------------------------------------------------------------- layout

@pytest.mark.parametrize("num_samples,world_size,batch_size,drop_last", CONFIGS)
def test_batches_match_the_stated_layout(num_samples, world_size, batch_size, drop_last):
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, drop_last)
        sampler.set_epoch(2)
        expected = _spec_batches(num_samples, world_size, rank, batch_size, drop_last, 11, 2)
        assert len(sampler) == len(expected)
        assert _as_lists(_take(sampler)) == expected


@pytest.mark.parametrize("drop_last", [False, True])
def test_batches_are_lists_of_python_ints(drop_last):
    sampler = _sampler(11, 2, 1, 2, drop_last)
    batches = _take(sampler)
    assert batches, "this configuration has batches"
    for batch in batches:
        assert type(batch) is list
        assert [type(i) for i in batch] == [int] * 2


def test_rank_takes_a_stride_not_a_slab():
    sampler = _sampler(12, 3, 1, 2, False, shuffle=False)
    assert _as_lists(_take(sampler)) == [[1, 4], [7, 10]]


def test_ranks_interleave_back_into_the_epoch_order():
    num_samples, world_size, batch_size = 30, 3, 5
    per_rank = []
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, False)
        sampler.set_epoch(4)
        per_rank.append([i for b in _take(sampler) for i in b])
    interleaved = [per_rank[p % world_size][p // world_size] for p in range(num_samples)]
    assert interleaved == _order(num_samples, 11, 4)


@pytest.mark.parametrize("num_samples,world_size,batch_size", [(23, 4, 3), (10, 3, 4), (2, 4, 1)])
def test_every_rank_gets_the_same_number_of_full_batches(num_samples, world_size, batch_size):
    counts = set()
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, False)
        batches = _take(sampler)
        # the stated count, not only the sampler's own len(): zero batches would check nothing
        expected = _spec_batches(num_samples, world_size, rank, batch_size, False, 11, 0)
        assert len(batches) == len(sampler) == len(expected)
        assert all(len(b) == batch_size for b in batches)
        counts.add(len(batches))
    assert len(counts) == 1


def test_padding_wraps_from_the_start_of_the_order():
    # 10 samples, 4 ranks x 2: 16 positions, the last 6 repeat samples 0..5 of the order
    got = {rank: _as_lists(_take(_sampler(10, 4, rank, 2, False, shuffle=False)))
           for rank in range(4)}
    assert got == {
        0: [[0, 4], [8, 2]],
        1: [[1, 5], [9, 3]],
        2: [[2, 6], [0, 4]],
        3: [[3, 7], [1, 5]],
    }


def test_padding_wraps_around_more_than_once():
    got = [list(b) for rank in range(2) for b in _take(_sampler(3, 2, rank, 4, False, shuffle=False))]
    assert got == [[0, 2, 1, 0], [1, 0, 2, 1]]


def test_without_drop_last_every_sample_is_seen():
    seen = set()
    for rank in range(4):
        seen.update(i for b in _take(_sampler(23, 4, rank, 3, False)) for i in b)
    assert seen == set(range(23))


def test_drop_last_drops_the_tail_of_the_order():
    num_samples, world_size, batch_size = 23, 4, 3
    taken = []
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, True)
        batches = _take(sampler)
        assert len(sampler) == 1
        assert all(len(b) == batch_size for b in batches)
        taken.extend(i for b in batches for i in b)
    order = _order(num_samples, 11, 0)
    assert sorted(taken) == sorted(order[:12])


def test_drop_last_with_too_few_samples_yields_nothing():
    sampler = _sampler(5, 2, 1, 3, True)
    assert len(sampler) == 0
    assert _take(sampler) == []
    assert sampler.state_dict() == {"epoch": 0, "batches_consumed": 0}


# ---------------------------------------------------------------- separate processes

@pytest.mark.parametrize("num_samples,world_size,batch_size,drop_last", [(23, 4, 3, False), (29, 3, 4, True)])
def test_ranks_in_separate_processes_cover_the_epoch(num_samples, world_size, batch_size, drop_last):
    # One fresh interpreter per rank, started together, each with its own hash seed: the
    # ranks agree only through (seed, epoch), as on a real cluster.
    epochs = [0, 3]
    results = probe("_probe_ranks.py").run_ranks(num_samples, world_size, batch_size, 11, True, drop_last, epochs)
    assert len(results) == world_size
    for rank, (code, out, err) in enumerate(results):
        assert code == 0, f"rank {rank}'s process failed:\n{err}"
        got = json.loads(out.strip().splitlines()[-1])
        for i, epoch in enumerate(epochs):
            expected = _spec_batches(num_samples, world_size, rank, batch_size, drop_last, 11, epoch)
            assert got["len"][i] == len(expected)
            assert got["epochs"][i] == expected, f"rank {rank}, epoch {epoch}"


# ---------------------------------------------------------------- epochs and resume

def test_order_depends_only_on_seed_and_epoch():
    walked = _sampler(29, 3, 2, 2, False)
    for epoch in range(4):
        walked.set_epoch(epoch)
        last = _as_lists(_take(walked))
    fresh = _sampler(29, 3, 2, 2, False)
    fresh.set_epoch(3)
    assert _as_lists(_take(fresh)) == last
    assert last == _spec_batches(29, 3, 2, 2, False, 11, 3)


def test_epochs_can_be_visited_in_any_order():
    sampler = _sampler(19, 2, 0, 2, False)
    for epoch in (5, 2, 9, 2, 0):
        sampler.set_epoch(epoch)
        assert _as_lists(_take(sampler)) == _spec_batches(19, 2, 0, 2, False, 11, epoch), f"epoch {epoch}"


def test_set_epoch_again_replays_the_same_epoch():
    sampler = _sampler(20, 2, 0, 3, False)
    sampler.set_epoch(5)
    first = _as_lists(_take(sampler))
    sampler.set_epoch(5)
    assert _as_lists(_take(sampler)) == first


def test_set_epoch_mid_epoch_restarts_it():
    sampler = _sampler(20, 2, 0, 3, False)
    sampler.set_epoch(5)
    whole = _spec_batches(20, 2, 0, 3, False, 11, 5)
    assert _as_lists(itertools.islice(iter(sampler), 2)) == whole[:2]
    sampler.set_epoch(5)
    assert sampler.state_dict() == {"epoch": 5, "batches_consumed": 0}
    assert _as_lists(_take(sampler)) == whole


def test_set_epoch_mid_epoch_to_another_epoch_starts_at_its_first_batch():
    sampler = _sampler(20, 2, 1, 3, False)
    sampler.set_epoch(1)
    assert len(_as_lists(itertools.islice(iter(sampler), 3))) == 3
    sampler.set_epoch(2)
    assert sampler.state_dict() == {"epoch": 2, "batches_consumed": 0}
    assert _as_lists(_take(sampler)) == _spec_batches(20, 2, 1, 3, False, 11, 2)


def test_new_epoch_gives_a_new_order():
    sampler = _sampler(20, 2, 0, 3, False)
    epoch0 = _as_lists(_take(sampler))
    sampler.set_epoch(1)
    assert _as_lists(_take(sampler)) != epoch0


def test_state_dict_counts_yielded_batches():
    sampler = _sampler(40, 2, 1, 3, False)
    sampler.set_epoch(6)
    assert sampler.state_dict() == {"epoch": 6, "batches_consumed": 0}
    it = iter(sampler)
    next(it)
    assert sampler.state_dict() == {"epoch": 6, "batches_consumed": 1}
    next(it)
    assert sampler.state_dict() == {"epoch": 6, "batches_consumed": 2}
    rest = [b for b in it]
    assert len(rest) == len(sampler) - 2
    assert sampler.state_dict() == {"epoch": 6, "batches_consumed": len(sampler)}


def test_state_dict_is_a_plain_dict_of_python_ints():
    sampler = _sampler(40, 2, 1, 3, False)
    sampler.set_epoch(3)
    next(iter(sampler))
    state = sampler.state_dict()
    assert type(state) is dict
    assert set(state) == {"epoch", "batches_consumed"}
    assert type(state["epoch"]) is int and type(state["batches_consumed"]) is int
    assert state == {"epoch": 3, "batches_consumed": 1}


def test_a_second_iterator_continues_where_the_first_stopped():
    sampler = _sampler(33, 3, 2, 2, False)
    sampler.set_epoch(1)
    whole = _spec_batches(33, 3, 2, 2, False, 11, 1)
    first = _as_lists(itertools.islice(iter(sampler), 2))
    second = _as_lists(_take(sampler))
    assert first + second == whole


@pytest.mark.parametrize("stop_after", [0, 1, 3, 6, 7])
def test_resume_mid_epoch_continues_exactly(stop_after):
    config = dict(num_samples=41, world_size=3, rank=1, batch_size=2, drop_last=False)
    everything = _spec_batches(41, 3, 1, 2, False, 11, 2)
    assert len(everything) == 7

    first = _sampler(**config)
    first.set_epoch(2)
    done = _as_lists(itertools.islice(iter(first), stop_after))
    state = first.state_dict()
    assert state == {"epoch": 2, "batches_consumed": stop_after}

    resumed = _sampler(**config)
    resumed.load_state_dict(state)
    assert resumed.state_dict() == state
    rest = _as_lists(_take(resumed))
    assert done + rest == everything


def test_resume_replaces_the_loaded_samplers_own_position():
    # the loading sampler has already been moved elsewhere: the loaded state wins entirely
    config = dict(num_samples=26, world_size=2, rank=0, batch_size=3, drop_last=True)
    everything = _spec_batches(26, 2, 0, 3, True, 11, 4)
    resumed = _sampler(**config)
    resumed.set_epoch(9)
    next(iter(resumed))
    resumed.load_state_dict({"epoch": 4, "batches_consumed": 2})
    assert _as_lists(_take(resumed)) == everything[2:]


def test_exhausted_epoch_yields_nothing_until_set_epoch():
    sampler = _sampler(12, 2, 0, 2, False)
    sampler.set_epoch(1)
    whole = _as_lists(_take(sampler))
    assert whole == _spec_batches(12, 2, 0, 2, False, 11, 1)
    assert _take(sampler) == []
    assert sampler.state_dict() == {"epoch": 1, "batches_consumed": len(whole)}
    sampler.set_epoch(1)
    assert _as_lists(_take(sampler)) == whole


def test_resumed_exhausted_epoch_yields_nothing():
    sampler = _sampler(12, 2, 0, 2, False)
    sampler.load_state_dict({"epoch": 3, "batches_consumed": len(sampler)})
    assert _take(sampler) == []
    assert sampler.state_dict() == {"epoch": 3, "batches_consumed": len(sampler)}
