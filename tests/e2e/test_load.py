"""A short classroom against the real server: 8 students for 20 s, 2 of them training on Live training.

Every student gets its page, every rerun finishes, nothing raises. Latency thresholds live in the benchmark
(`make load`), not here: this machine is shared and noisy.
"""

from bench.load import run_class, server


def test_eight_students_two_training_get_every_answer_and_no_error():
    with server() as (base, _):
        summary = run_class(base, sessions=8, trainers=2, seconds=20)
    assert summary["errors"] == []
    assert summary["answered"] == 8
    assert summary["reruns"] >= 6 * 3                 # six browsing students, a change every 2 to 4 s
    assert summary["ticks"] >= 2 * 10                 # two trainers, a live-view tick every 0.5 s
