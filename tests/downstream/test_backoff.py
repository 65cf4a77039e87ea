"""The restart policy alone: no processes, no clock."""

from __future__ import annotations

from hermes_hub.downstream.backoff import Backoff


def policy(**overrides: float) -> Backoff:
    settings = {"initial": 1.0, "maximum": 60.0, "stable_after": 300.0, "crash_loop_after": 5} | overrides
    return Backoff(**settings)


def test_delays_double_from_the_initial_value_up_to_the_maximum():
    p = policy(crash_loop_after=100)
    assert [p.failed(None).delay for _ in range(9)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_a_server_that_never_became_ready_is_parked_in_crash_loop_after_the_configured_failures():
    p = policy()
    retries = [p.failed(None) for _ in range(6)]
    assert [r.crash_loop for r in retries] == [False, False, False, False, True, True]
    assert [r.delay for r in retries] == [1, 2, 4, 8, 60, 60]
    assert retries[4].quick_failures == 5


def test_short_uptimes_count_as_quick_failures_too():
    p = policy(crash_loop_after=3)
    assert [p.failed(u).crash_loop for u in (0.5, 120.0, 299.0)] == [False, False, True]


def test_a_stable_run_resets_the_delay_and_the_crash_loop_count():
    p = policy()
    for _ in range(5):
        p.failed(None)
    after_stable = p.failed(uptime=300.0)
    assert (after_stable.delay, after_stable.crash_loop, after_stable.quick_failures) == (1, False, 0)
    assert [p.failed(None).delay for _ in range(3)] == [2, 4, 8]
    assert p.quick_failures == 3


def test_a_zero_initial_backoff_retries_at_once_every_time():
    p = policy(initial=0.0, crash_loop_after=100)
    assert {p.failed(None).delay for _ in range(5)} == {0.0}


def test_the_maximum_caps_even_the_first_delay_when_they_are_equal():
    p = policy(initial=5.0, maximum=5.0, crash_loop_after=100)
    assert [p.failed(None).delay for _ in range(3)] == [5, 5, 5]
