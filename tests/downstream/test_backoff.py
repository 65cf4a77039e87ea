"""The restart policy alone: no processes, no clock."""

from __future__ import annotations

from hermes_hub.downstream.backoff import MIN_RUN, Backoff


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


def test_runs_shorter_than_the_minimum_count_as_quick_failures_too():
    p = policy(crash_loop_after=3)
    retries = [p.failed(u) for u in (0.1, MIN_RUN / 2, None)]
    assert [(r.delay, r.crash_loop) for r in retries] == [(1, False), (2, False), (60, True)]


def test_a_crash_after_a_run_restarts_at_once_and_ends_the_row_but_the_delay_keeps_its_memory():
    p = policy()
    assert [p.failed(None).delay for _ in range(2)] == [1, 2]
    after_run = p.failed(uptime=5.0)
    assert (after_run.delay, after_run.crash_loop, after_run.quick_failures) == (0, False, 0)
    assert [p.failed(None).delay for _ in range(2)] == [4, 8]  # still in trouble: no reset before stable_after
    assert p.quick_failures == 2


def test_a_server_killed_every_few_seconds_restarts_at_once_every_time_and_is_never_parked():
    p = policy(crash_loop_after=3)
    retries = [p.failed(uptime=u) for u in [0.6, 1.6, 2.5] * 7]
    assert {(r.delay, r.crash_loop) for r in retries} == {(0, False)}


def test_a_server_dying_right_after_it_became_ready_backs_off_and_is_parked_as_a_crash_loop():
    p = policy()
    retries = [p.failed(uptime=0.2) for _ in range(5)]
    assert [r.delay for r in retries] == [1, 2, 4, 8, 60] and retries[-1].crash_loop


def test_with_no_initial_backoff_a_run_must_last_the_minimum_to_restart_at_once():
    p = policy(initial=0.0, crash_loop_after=3)
    assert [p.failed(uptime=MIN_RUN / 2).crash_loop for _ in range(3)] == [False, False, True]
    assert p.failed(uptime=MIN_RUN).delay == 0 and p.quick_failures == 0


def test_a_stable_run_forgives_every_earlier_failure_even_at_the_maximum_delay():
    p = policy(stable_after=30.0)
    for _ in range(7):
        p.failed(None)  # parked, pending delay 60
    after_stable = p.failed(uptime=30.0)
    assert (after_stable.delay, after_stable.crash_loop, after_stable.quick_failures) == (0, False, 0)
    assert [p.failed(None).delay for _ in range(3)] == [1, 2, 4]


def test_a_zero_initial_backoff_retries_at_once_every_time():
    p = policy(initial=0.0, crash_loop_after=100)
    assert {p.failed(None).delay for _ in range(5)} == {0.0}


def test_the_maximum_caps_even_the_first_delay_when_they_are_equal():
    p = policy(initial=5.0, maximum=5.0, crash_loop_after=100)
    assert [p.failed(None).delay for _ in range(3)] == [5, 5, 5]
