// Deterministic CPU emulation of one Metal compute dispatch: threadgroups run one after
// another; within a threadgroup every lane is a fiber (ucontext), and lanes run one at a
// time, each until its next threadgroup_barrier or its return, in a chosen order. So a
// read of a slot another lane writes without a barrier in between sees the stale value
// whenever the order puts the reader first: data races become wrong answers, not luck.
// `threadgroup` variables are function statics, shared by the lanes of the running group
// and left stale for the next group and the next dispatch (as real threadgroup memory may
// be). A barrier reached by some lanes but not others (different lines, or after other
// lanes returned) is reported as an error.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace emu {
enum State { READY = 0, AT_BARRIER = 1, EXITED = 2 };
struct Lane {
    ucontext_t ctx;
    int state = READY;
    int line = 0;
};
struct Group {
    std::vector<Lane> lanes;
    std::vector<std::vector<char>> stacks;
    ucontext_t sched;
    unsigned current = 0;
    unsigned row = 0;
    unsigned size = 0;
    const std::function<void(unsigned, unsigned, unsigned)>* body = nullptr;
};
static Group group;
static const size_t STACK_BYTES = 128 * 1024;

static void trampoline() {
    unsigned lane = group.current;
    (*group.body)(group.row, lane, group.size);
    group.lanes[lane].state = EXITED;  // uc_link returns to the scheduler
}

static int dispatch(long n_groups, long group_size, int order, char* err, int errlen,
                    const std::function<void(unsigned, unsigned, unsigned)>& body) {
    group.lanes.assign(group_size, Lane());
    if ((long)group.stacks.size() < group_size) group.stacks.resize(group_size);
    for (auto& s : group.stacks) if (s.size() < STACK_BYTES) s.resize(STACK_BYTES);
    group.body = &body;
    group.size = (unsigned)group_size;
    std::mt19937 rng(12345);
    std::vector<unsigned> ord(group_size);
    for (long g = 0; g < n_groups; ++g) {
        group.row = (unsigned)g;
        for (long l = 0; l < group_size; ++l) {
            Lane& lane = group.lanes[l];
            lane = Lane();
            getcontext(&lane.ctx);
            lane.ctx.uc_stack.ss_sp = group.stacks[l].data();
            lane.ctx.uc_stack.ss_size = STACK_BYTES;
            lane.ctx.uc_link = &group.sched;
            makecontext(&lane.ctx, trampoline, 0);
        }
        for (int phase = 0;; ++phase) {
            for (long l = 0; l < group_size; ++l) ord[l] = (unsigned)l;
            if (order == 1) std::reverse(ord.begin(), ord.end());
            if (order == 2) std::shuffle(ord.begin(), ord.end(), rng);
            for (unsigned l : ord) {
                if (group.lanes[l].state == EXITED) continue;
                group.lanes[l].state = READY;
                group.current = l;
                swapcontext(&group.sched, &group.lanes[l].ctx);
            }
            long waiting = 0, exited = 0;
            int line = -1, other = -1;
            for (auto& lane : group.lanes) {
                if (lane.state == EXITED) { ++exited; continue; }
                ++waiting;
                if (line < 0) line = lane.line;
                else if (lane.line != line) other = lane.line;
            }
            if (waiting == 0) break;
            if (exited > 0) {
                snprintf(err, errlen, "threadgroup %ld: %ld lanes wait at the barrier on line %d after %ld lanes "
                         "returned (a barrier not reached by the whole threadgroup)", g, waiting, line, exited);
                return 1;
            }
            if (other >= 0) {
                snprintf(err, errlen, "threadgroup %ld: lanes wait at different barriers (lines %d and %d) in "
                         "the same phase (a barrier in non-uniform control flow)", g, line, other);
                return 1;
            }
            if (phase > 1000000) {
                snprintf(err, errlen, "threadgroup %ld: more than a million barrier phases", g);
                return 1;
            }
        }
    }
    return 0;
}
}  // namespace emu

void emu_barrier(int line) {
    emu::Lane& lane = emu::group.lanes[emu::group.current];
    lane.state = emu::AT_BARRIER;
    lane.line = line;
    swapcontext(&lane.ctx, &emu::group.sched);
}
