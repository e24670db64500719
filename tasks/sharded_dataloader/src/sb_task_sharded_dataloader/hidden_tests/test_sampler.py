import itertools

import numpy as np
import pytest

from sampler import ShardedSampler, epoch_order

# Every check here is exact: the sampler produces integer indices, so there is no tolerance.

CONFIGS = [
    # (num_samples, world_size, batch_size, drop_last)
    (24, 3, 4, False),   # divides evenly
    (23, 4, 3, False),   # needs padding
    (23, 4, 3, True),    # drops the tail
    (50, 3, 5, True),
    (7, 2, 3, False),
    (1, 3, 2, False),    # padding wraps around many times
]


def _sampler(num_samples, world_size, rank, batch_size, drop_last, seed=11, shuffle=True):
    return ShardedSampler(num_samples, world_size=world_size, rank=rank, batch_size=batch_size,
                          seed=seed, shuffle=shuffle, drop_last=drop_last)


def _spec_batches(num_samples, world_size, rank, batch_size, drop_last, seed, epoch, shuffle=True):
    """The stated layout, built by walking global positions one at a time."""
    if shuffle:
        order = [int(i) for i in np.random.default_rng([seed, epoch]).permutation(num_samples)]
    else:
        order = list(range(num_samples))
    step = world_size * batch_size
    num_batches = num_samples // step if drop_last else (num_samples + step - 1) // step
    batches = [[] for _ in range(num_batches)]
    for position in range(num_batches * step):
        if position % world_size == rank:
            local = position // world_size
            batches[local // batch_size].append(order[position % num_samples])
    return batches


# ---------------------------------------------------------------- epoch_order

@pytest.mark.parametrize("seed,epoch", [(0, 0), (11, 3), (2024, 7)])
def test_epoch_order_uses_the_stated_generator(seed, epoch):
    expected = np.random.default_rng([seed, epoch]).permutation(37).tolist()
    assert list(epoch_order(37, seed, epoch)) == expected


def test_epoch_order_without_shuffle_is_identity():
    assert list(epoch_order(9, 5, 4, shuffle=False)) == list(range(9))


def test_epoch_order_differs_across_epochs_and_seeds():
    a = list(epoch_order(40, 1, 0))
    assert sorted(a) == list(range(40))
    assert a != list(epoch_order(40, 1, 1))
    assert a != list(epoch_order(40, 2, 0))
    # seed + epoch is not the key: (1, 0) and (0, 1) are different epochs
    assert a != list(epoch_order(40, 0, 1))


# ---------------------------------------------------------------- layout

@pytest.mark.parametrize("num_samples,world_size,batch_size,drop_last", CONFIGS)
def test_batches_match_the_stated_layout(num_samples, world_size, batch_size, drop_last):
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, drop_last)
        sampler.set_epoch(2)
        expected = _spec_batches(num_samples, world_size, rank, batch_size, drop_last, 11, 2)
        assert len(sampler) == len(expected)
        assert [list(b) for b in sampler] == expected


def test_rank_takes_a_stride_not_a_slab():
    sampler = _sampler(12, 3, 1, 2, False, shuffle=False)
    assert [list(b) for b in sampler] == [[1, 4], [7, 10]]


def test_ranks_interleave_back_into_the_epoch_order():
    num_samples, world_size, batch_size = 30, 3, 5
    per_rank = []
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, False)
        sampler.set_epoch(4)
        per_rank.append([i for b in sampler for i in b])
    interleaved = [per_rank[p % world_size][p // world_size] for p in range(num_samples)]
    assert interleaved == list(epoch_order(num_samples, 11, 4))


@pytest.mark.parametrize("num_samples,world_size,batch_size", [(23, 4, 3), (10, 3, 4), (2, 4, 1)])
def test_every_rank_gets_the_same_number_of_full_batches(num_samples, world_size, batch_size):
    counts = set()
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, False)
        batches = list(sampler)
        assert len(batches) == len(sampler)
        assert all(len(b) == batch_size for b in batches)
        counts.add(len(batches))
    assert len(counts) == 1


def test_padding_wraps_from_the_start_of_the_order():
    # 10 samples, 4 ranks x 2: 16 positions, the last 6 repeat samples 0..5 of the order
    got = {rank: [list(b) for b in _sampler(10, 4, rank, 2, False, shuffle=False)]
           for rank in range(4)}
    assert got == {
        0: [[0, 4], [8, 2]],
        1: [[1, 5], [9, 3]],
        2: [[2, 6], [0, 4]],
        3: [[3, 7], [1, 5]],
    }


def test_padding_wraps_around_more_than_once():
    got = [list(b) for rank in range(2) for b in _sampler(3, 2, rank, 4, False, shuffle=False)]
    assert got == [[0, 2, 1, 0], [1, 0, 2, 1]]


def test_without_drop_last_every_sample_is_seen():
    seen = set()
    for rank in range(4):
        seen.update(i for b in _sampler(23, 4, rank, 3, False) for i in b)
    assert seen == set(range(23))


def test_drop_last_drops_the_tail_of_the_order():
    num_samples, world_size, batch_size = 23, 4, 3
    taken = []
    for rank in range(world_size):
        sampler = _sampler(num_samples, world_size, rank, batch_size, True)
        batches = list(sampler)
        assert len(sampler) == 1
        assert all(len(b) == batch_size for b in batches)
        taken.extend(i for b in batches for i in b)
    order = list(epoch_order(num_samples, 11, 0))
    assert sorted(taken) == sorted(order[:12])


def test_drop_last_with_too_few_samples_yields_nothing():
    sampler = _sampler(5, 2, 1, 3, True)
    assert len(sampler) == 0
    assert list(sampler) == []


# ---------------------------------------------------------------- epochs and resume

def test_order_depends_only_on_seed_and_epoch():
    walked = _sampler(29, 3, 2, 2, False)
    for epoch in range(4):
        walked.set_epoch(epoch)
        last = [list(b) for b in walked]
    fresh = _sampler(29, 3, 2, 2, False)
    fresh.set_epoch(3)
    assert [list(b) for b in fresh] == last
    assert last == _spec_batches(29, 3, 2, 2, False, 11, 3)


def test_set_epoch_again_replays_the_same_epoch():
    sampler = _sampler(20, 2, 0, 3, False)
    sampler.set_epoch(5)
    first = [list(b) for b in sampler]
    sampler.set_epoch(5)
    assert [list(b) for b in sampler] == first


def test_new_epoch_gives_a_new_order():
    sampler = _sampler(20, 2, 0, 3, False)
    epoch0 = [list(b) for b in sampler]
    sampler.set_epoch(1)
    assert [list(b) for b in sampler] != epoch0


def test_state_dict_counts_yielded_batches():
    sampler = _sampler(40, 2, 1, 3, False)
    sampler.set_epoch(6)
    assert sampler.state_dict() == {"epoch": 6, "batches_consumed": 0}
    it = iter(sampler)
    next(it)
    next(it)
    assert sampler.state_dict() == {"epoch": 6, "batches_consumed": 2}
    list(it)
    assert sampler.state_dict() == {"epoch": 6, "batches_consumed": len(sampler)}


@pytest.mark.parametrize("stop_after", [1, 3, 6])
def test_resume_mid_epoch_continues_exactly(stop_after):
    config = dict(num_samples=41, world_size=3, rank=1, batch_size=2, drop_last=False)
    full = _sampler(**config)
    full.set_epoch(2)
    everything = [list(b) for b in full]

    first = _sampler(**config)
    first.set_epoch(2)
    done = [list(b) for b in itertools.islice(iter(first), stop_after)]
    state = first.state_dict()

    resumed = _sampler(**config)
    resumed.load_state_dict(state)
    rest = [list(b) for b in resumed]
    assert done + rest == everything


def test_exhausted_epoch_yields_nothing_until_set_epoch():
    sampler = _sampler(12, 2, 0, 2, False)
    sampler.set_epoch(1)
    whole = [list(b) for b in sampler]
    assert list(sampler) == []
    sampler.set_epoch(1)
    assert [list(b) for b in sampler] == whole


def test_invalid_rank_raises():
    with pytest.raises(ValueError):
        ShardedSampler(10, world_size=2, rank=2, batch_size=1)
