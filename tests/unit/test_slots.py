"""The server's training slots: at most K train, the rest wait first come first served, leavers free their place."""

from explorer.training.slots import STALE_SECONDS, Slots, capacity


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_k_train_the_rest_queue_in_arrival_order_and_move_up():
    clock = Clock()
    slots = Slots(2, clock)
    assert [slots.claim(s) for s in "abcd"] == [0, 0, 1, 2]          # a, b train; c first in line, then d
    assert slots.status() == (2, 2, 2)
    assert slots.claim("d") == 2 and slots.claim("c") == 1            # ticking again does not jump the line
    slots.release("a")                                                 # a pauses
    assert slots.claim("d") == 2                                       # d may not overtake c ...
    assert slots.claim("c") == 0 and slots.claim("d") == 1             # ... c takes the slot, d moves up
    slots.release("d")                                                 # d pauses while waiting: leaves the line
    assert slots.status() == (2, 2, 0)


def test_a_tab_that_stops_ticking_gives_its_slot_back():
    clock = Clock()
    slots = Slots(1, clock)
    assert slots.claim("closed") == 0 and slots.claim("next") == 1
    clock.now += STALE_SECONDS / 2
    assert slots.claim("next") == 1                                    # the holder may still come back
    clock.now += STALE_SECONDS                                         # "closed" has not ticked for 1.5 x the limit
    assert slots.claim("next") == 0


def test_capacity_from_the_environment_or_the_cores(monkeypatch):
    monkeypatch.setenv("EXPLORER_TRAINING_SLOTS", "3")
    assert capacity() == 3
    for bad in ("0", "-1", "two", ""):
        monkeypatch.setenv("EXPLORER_TRAINING_SLOTS", bad)
        monkeypatch.setattr("os.cpu_count", lambda: 16)
        assert capacity() == 15                        # the cores less one: one is left for the pages
        monkeypatch.setattr("os.cpu_count", lambda: 1)
        assert capacity() == 1
