"""Hidden tests for paged_kv_cache.

Every test drives the solution's BlockManager through _driver.Driver, which keeps a
simulated KV store here in the judge and checks after every operation that each live
sequence reads back exactly its own tokens (see _driver.py). The directed tests then
compare block tables, cached-token counts and copy operations with values worked out by
hand from the prompt's rules; the random tests replay seeded operation sequences against
_model.Model, a brute-force model of the same rules (scans, flat prefix keys, snapshots
for atomicity) that shares no code with any solution.
"""
import pytest

from _driver import Driver
from _model import Model, OutOfBlocks
from _ops import operations
from block_manager import BlockManager


def driver(num_blocks, block_size):
    return Driver(BlockManager(num_blocks, block_size), num_blocks, block_size)


# -- fresh blocks, prefix hits, keys ---------------------------------------------------------

def test_fresh_blocks_come_lowest_id_first_and_free_count_follows():
    d = driver(8, 4)
    assert d.allocate("a", list(range(10))) == ([0, 1, 2], 0)
    assert d.allocate("b", [7, 7, 7]) == ([3], 0)
    assert d.mgr.num_free_blocks() == 4
    d.free("a")                      # 2 (partial) has no key; 1 and 0 stay cached
    assert d.mgr.num_free_blocks() == 7
    assert d.allocate("c", [5]) == ([2], 0)
    assert d.allocate("e", [5] * 9) == ([4, 5, 6], 0)


def test_a_prompt_reuses_the_cached_full_blocks_it_starts_with():
    d = driver(8, 4)
    prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert d.allocate("a", prompt) == ([0, 1, 2], 0)
    assert d.allocate("b", prompt[:8] + [0, 0]) == ([0, 1, 3], 8)
    assert d.mgr.num_free_blocks() == 4
    assert d.allocate("c", [1, 2, 3, 4, 0, 6, 7, 8, 9]) == ([0, 4, 5], 4)


def test_the_same_block_tokens_after_a_different_prefix_are_a_different_block():
    d = driver(8, 4)
    assert d.allocate("a", [1, 2, 3, 4, 5, 6, 7, 8]) == ([0, 1], 0)
    assert d.allocate("b", [9, 9, 9, 9, 5, 6, 7, 8, 0]) == ([2, 3, 4], 0)
    assert d.allocate("c", [5, 6, 7, 8, 1]) == ([5, 6], 0)


def _second_key_cached_without_the_first():
    """A pool of 5 blocks, block_size 2, where key 1 2 3 4 is registered (to block 2, held by
    "y") but key 1 2 is not, and blocks 1, 3, 4 are free and key-less."""
    d = driver(5, 2)
    d.allocate("x", [1])
    d.fork("x", "y")
    d.append("x", [2])                              # key 1 2 -> block 1
    d.append("y", [2, 3, 4])                        # block 0 stays key-less; key 1 2 3 4 -> block 2
    assert d.tables["y"] == [0, 2]
    d.free("x")
    for seq_id, token in (("z", 9), ("u", 7), ("w", 8)):
        d.allocate(seq_id, [token])                 # w evicts block 1: key 1 2 is gone
    assert d.tables["w"] == [1]
    for seq_id in ("z", "u", "w"):
        d.free(seq_id)
    return d


def test_the_prefix_walk_stops_at_the_first_block_not_in_the_cache():
    d = _second_key_cached_without_the_first()
    assert d.allocate("v", [1, 2, 3, 4, 5]) == ([1, 3, 4], 0)


def test_a_prompt_registers_its_blocks_after_taking_every_fresh_block():
    d = _second_key_cached_without_the_first()
    d.free("y")                                     # block 2 is cached free, block 0 key-less
    assert d.allocate("v", [1, 2, 3, 4, 5, 6, 7, 8, 9]) == ([0, 1, 3, 4, 2], 0)
    d.free("v")
    assert d.allocate("t", [1, 2, 3, 4, 0]) == ([0, 1, 2], 4)


def test_a_partial_block_is_never_shared_through_the_cache():
    d = driver(8, 4)
    assert d.allocate("a", [1, 2, 3, 4, 5, 6]) == ([0, 1], 0)
    assert d.allocate("b", [1, 2, 3, 4, 5, 6, 7, 8, 9]) == ([0, 2, 3], 4)
    assert d.allocate("c", [1, 2, 3, 4, 5, 6]) == ([0, 4], 4)


def test_a_fully_cached_prompt_still_computes_its_last_block():
    d = driver(8, 4)
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    assert d.allocate("a", prompt) == ([0, 1], 0)
    assert d.allocate("b", prompt) == ([0, 2], 4)   # block 2 repeats block 1's key: not registered
    d.free("a")
    d.free("b")                                     # 2 has no key: it is free and key-less
    assert d.allocate("c", prompt + [9]) == ([0, 1, 2], 8)
    assert d.allocate("e", [4]) == ([3], 0)


# -- fork and copy-on-write --------------------------------------------------------------------

def test_fork_shares_every_block_and_takes_none():
    d = driver(8, 4)
    d.allocate("a", [1, 2, 3, 4, 5, 6])
    d.fork("a", "b")
    assert d.tables["b"] == [0, 1] and d.mgr.num_free_blocks() == 6
    d.free("a")
    assert d.mgr.num_free_blocks() == 6
    assert d.mgr.block_table("b") == [0, 1]


def test_writing_into_a_shared_partial_block_copies_it_first():
    d = driver(8, 4)
    d.allocate("a", [1, 2, 3, 4, 5, 6])
    d.fork("a", "b")
    assert d.append("b", [7]) == [(1, 2)]
    assert d.tables["b"] == [0, 2]
    assert d.append("a", [9]) == []                 # block 1 is a's alone now
    assert d.tables["a"] == [0, 1]
    assert d.append("b", [8, 1]) == []
    assert d.tables["b"] == [0, 2, 3]
    assert d.allocate("c", [1, 2, 3, 4, 5, 6, 7, 8, 0]) == ([0, 2, 4], 8)


def test_a_copy_on_write_that_fills_the_block_is_registered_for_the_copy():
    d = driver(8, 2)
    d.allocate("a", [1, 2, 3])
    d.fork("a", "b")
    assert d.append("b", [4]) == [(1, 2)]
    assert d.allocate("c", [1, 2, 3, 4, 5]) == ([0, 2, 3], 4)


def test_appending_after_a_full_shared_block_needs_no_copy():
    d = driver(8, 4)
    d.allocate("a", [1, 2, 3, 4, 5, 6, 7, 8])
    d.fork("a", "b")
    assert d.append("b", [9]) == []
    assert d.tables["b"] == [0, 1, 2] and d.tables["a"] == [0, 1]
    assert d.append("a", [9, 9, 9, 9, 9]) == []
    assert d.tables["a"] == [0, 1, 3, 4]


# -- registration by appends, duplicate keys ---------------------------------------------------

def test_a_block_filled_by_appends_is_registered_when_it_fills():
    d = driver(8, 4)
    assert d.allocate("a", [1, 2, 3]) == ([0], 0)
    d.append("a", [4, 5])
    assert d.allocate("b", [1, 2, 3, 4, 0]) == ([0, 2], 4)
    d.append("a", [6, 7, 8])
    assert d.allocate("c", [1, 2, 3, 4, 5, 6, 7, 8, 1]) == ([0, 1, 3], 8)


def test_a_duplicate_key_keeps_the_first_block_and_later_keys_still_chain():
    d = driver(10, 2)
    assert d.allocate("a", [1]) == ([0], 0)
    d.fork("a", "b")
    assert d.append("a", [2]) == [(0, 1)]           # (1, 2) registered to block 1
    assert d.append("b", [2]) == []                 # block 0 fills with the same key: stays key-less
    d.append("b", [3, 4])                           # block 2: key of 1 2 3 4, not of "3 4" alone
    assert d.tables["b"] == [0, 2]
    assert d.allocate("c", [3, 4, 5]) == ([3, 4], 0)
    assert d.allocate("e", [1, 2, 3, 4, 5]) == ([1, 2, 5], 4)
    d.free("b")                                     # block 0 returns key-less
    assert d.allocate("f", [7]) == ([0], 0)


def test_registration_follows_taking_every_block_the_append_needs():
    d = driver(4, 2)
    d.allocate("x", [1, 2])
    d.free("x")                                     # block 0: cached, key 1 2
    d.allocate("a", [1])
    d.allocate("c", [9])
    d.allocate("e", [8])
    assert d.tables["a"] == [1]
    d.append("a", [2, 3])                           # evicts 0 (dropping 1 2), then registers 1 2 on block 1
    assert d.tables["a"] == [1, 0]
    d.free("c")
    assert d.allocate("g", [1, 2, 5]) == ([1, 2], 2)


# -- eviction ----------------------------------------------------------------------------------

def test_eviction_takes_the_least_recently_freed_block_and_a_sequence_frees_its_tail_first():
    d = driver(4, 2)
    assert d.allocate("a", [1, 2, 3, 4]) == ([0, 1], 0)
    d.free("a")                                     # frees 1, then 0
    assert d.allocate("b", [5, 6, 7, 8]) == ([2, 3], 0)
    d.free("b")                                     # frees 3, then 2
    assert d.allocate("c", [9]) == ([1], 0)         # evicts 1 (key 1 2 3 4)
    assert d.allocate("e", [1, 2, 3, 4, 0]) == ([0, 3, 2], 2)


def test_a_hit_on_a_cached_free_block_refreshes_its_place_in_the_eviction_order():
    d = driver(4, 2)
    assert d.allocate("a", [1, 2, 3]) == ([0, 1], 0)
    assert d.allocate("b", [5, 6, 7]) == ([2, 3], 0)
    d.free("a")
    d.free("b")
    assert d.allocate("c", [1, 2, 9]) == ([0, 1], 2)
    d.free("c")                                     # 0 is now freed later than 2
    assert d.allocate("e", [8] * 7) == ([1, 3, 2, 0], 0)


def test_a_cached_block_in_use_again_is_never_evicted():
    d = driver(3, 2)
    d.allocate("a", [1, 2, 3])
    d.free("a")
    assert d.allocate("b", [5, 6, 7, 8]) == ([1, 2], 0)
    d.free("b")                                     # all free, cached in order 0, 2, 1
    assert d.allocate("c", [1, 2, 4]) == ([0, 2], 2)
    assert d.mgr.num_free_blocks() == 1
    assert d.allocate("e", [6]) == ([1], 0)


def test_an_evicted_block_no_longer_answers_for_its_old_key():
    d = driver(2, 2)
    assert d.allocate("a", [1, 2]) == ([0], 0)
    d.free("a")
    assert d.allocate("b", [3, 4, 5]) == ([1, 0], 0)
    d.free("b")
    assert d.allocate("c", [1, 2, 7]) == ([0, 1], 0)


def test_key_less_free_blocks_are_used_before_any_cached_block_is_evicted():
    d = driver(4, 2)
    assert d.allocate("a", [1, 2]) == ([0], 0)
    d.free("a")
    assert d.allocate("b", [3]) == ([1], 0)
    assert d.allocate("c", [4]) == ([2], 0)
    d.free("b")
    assert d.allocate("e", [5]) == ([1], 0)
    assert d.allocate("f", [6]) == ([3], 0)
    assert d.allocate("g", [7]) == ([0], 0)         # only now is the cached block evicted


def test_a_pool_of_one_block_caches_and_evicts_it():
    d = driver(1, 3)
    assert d.allocate("a", [1, 2, 3]) == ([0], 0)
    d.free("a")
    with pytest.raises(RuntimeError):
        d.allocate("b", [1, 2, 3, 4])               # hits block 0, then needs a fresh block: none
    assert d.allocate("c", [1, 2, 3]) == ([0], 0)   # nothing to take from the cache: evicts block 0


# -- refused requests --------------------------------------------------------------------------

def test_an_allocation_the_pool_cannot_serve_is_refused_whole_counting_its_own_hits():
    d = driver(3, 2)
    d.allocate("a", [1, 2, 3, 4, 5])
    d.free("a")
    assert d.allocate("b", [9]) == ([2], 0)
    with pytest.raises(RuntimeError):
        d.allocate("c", [1, 2, 3, 4, 5, 6, 7])
    with pytest.raises(RuntimeError):
        d.allocate("c", [1, 2, 3, 4, 5])
    d.free("b")
    assert d.allocate("c", [1, 2, 3, 4, 5]) == ([0, 1, 2], 4)


def test_a_refused_prompt_leaves_the_eviction_order_alone():
    d = driver(4, 2)
    d.allocate("a", [1, 2, 5])
    d.allocate("b", [3, 4, 6])
    d.free("a")
    d.free("b")                                     # cached free: 0 (key 1 2), then 2 (key 3 4)
    assert d.allocate("c", [7]) == ([1], 0)
    assert d.allocate("e", [8]) == ([3], 0)
    with pytest.raises(RuntimeError):
        d.allocate("f", [1, 2, 9, 9, 9])            # hits block 0, then needs 2 fresh blocks: 1 left
    assert d.allocate("g", [6]) == ([0], 0)


def test_an_append_the_pool_cannot_serve_is_refused_whole_counting_its_copy():
    d = driver(3, 2)
    d.allocate("a", [1])
    d.fork("a", "b")
    d.allocate("c", [5, 6])
    with pytest.raises(RuntimeError):
        d.append("a", [2, 3])
    assert d.append("a", [2]) == [(0, 2)]
    with pytest.raises(RuntimeError):
        d.append("b", [2, 3])
    d.free("c")
    assert d.append("b", [3, 4]) == []
    assert d.tables["b"] == [0, 1]


# -- errors ------------------------------------------------------------------------------------

def test_unknown_and_duplicate_sequence_ids_and_empty_requests_raise():
    mgr = BlockManager(4, 2)
    mgr.allocate("a", [1, 2, 3])
    for call in (lambda: mgr.append("zz", [1]), lambda: mgr.free("zz"), lambda: mgr.fork("zz", "y"),
                 lambda: mgr.block_table("zz")):
        with pytest.raises(KeyError):
            call()
    with pytest.raises(ValueError):
        mgr.allocate("a", [1])
    with pytest.raises(ValueError):
        mgr.fork("a", "a")
    with pytest.raises(ValueError):
        mgr.allocate("b", [])
    with pytest.raises(ValueError):
        mgr.append("a", [])
    assert mgr.num_free_blocks() == 2 and mgr.block_table("a") == [0, 1]
    for bad in ((0, 2), (4, 0)):
        with pytest.raises(ValueError):
            BlockManager(*bad)


# -- random operation sequences ----------------------------------------------------------------

# Each case mixes hits, evictions, copy-on-write, duplicate keys and refused requests
# (block_size 1 has no partial block, so no copy-on-write: it exercises the chain).
RANDOM_CASES = [(0, 14, 4), (1, 12, 2), (2, 16, 3), (3, 8, 1), (4, 10, 2), (6, 9, 3)]
RANDOM_OPS = 200


@pytest.mark.parametrize("seed, num_blocks, block_size", RANDOM_CASES)
def test_random_operations_match_the_brute_force_model_and_read_back(seed, num_blocks, block_size):
    """Every answer equals the model's; the driver's KV store checks every read-back."""
    model = Model(num_blocks, block_size)
    d = Driver(BlockManager(num_blocks, block_size), num_blocks, block_size, free_check_period=3)
    for step, op in enumerate(operations(seed, block_size, RANDOM_OPS, lambda: d.tokens)):
        kind, args = op[0], op[1:]
        try:
            want = getattr(model, kind)(*args)
        except OutOfBlocks:
            want = OutOfBlocks
        try:
            got = getattr(d, kind)(*args)
        except RuntimeError:
            got = OutOfBlocks
        assert got == want, f"step {step}: {op} returned {got}, the model {want}"
        for seq_id in (args if kind == "fork" else args[:1]):
            if seq_id in model.seqs:
                assert d.tables[seq_id] == model.block_table(seq_id), f"step {step}: table of {seq_id}"
        if step % 40 == 0:
            d.sweep()
    d.check_free_count()
    d.sweep()
