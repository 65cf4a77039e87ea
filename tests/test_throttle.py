"""The wrong-token limit per client address, on a clock the test moves."""

from __future__ import annotations

from hermes_hub.infra.throttle import Throttle, client_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_five_failures_in_a_minute_make_the_address_wait_until_the_oldest_is_a_minute_old():
    clock = Clock()
    throttle = Throttle(limit=5, window=60, clock=clock)
    for _ in range(4):
        throttle.failed("10.0.0.1")
        clock.now += 5
    assert throttle.wait("10.0.0.1") == 0
    throttle.failed("10.0.0.1")  # the fifth, 20 s after the first
    assert throttle.wait("10.0.0.1") == 40
    assert throttle.wait("10.0.0.2") == 0  # another address is not affected
    clock.now += 40
    assert throttle.wait("10.0.0.1") == 0  # the first has aged out: one more try
    throttle.failed("10.0.0.1")
    assert throttle.wait("10.0.0.1") == 5  # now the second is the oldest of five


def test_failures_spread_over_more_than_a_minute_never_lock_out():
    clock = Clock()
    throttle = Throttle(limit=5, window=60, clock=clock)
    for _ in range(50):
        throttle.failed("10.0.0.1")
        clock.now += 13
        assert throttle.wait("10.0.0.1") == 0


def test_an_ipv6_client_counts_per_64_and_a_mapped_ipv4_as_its_ipv4_address():
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.7") == client_key("192.0.2.7") == "192.0.2.7"
    assert client_key("unknown") == "unknown"
    throttle = Throttle(limit=1, window=60, clock=Clock())
    throttle.failed("2001:db8:1:2::1")
    assert throttle.wait("2001:db8:1:2::ffff") == 60


def test_the_table_of_addresses_is_bounded_forgetting_the_least_recent():
    throttle = Throttle(limit=1, window=60, addresses=3, clock=Clock())
    for n in range(5):
        throttle.failed(f"10.0.0.{n}")
    assert [throttle.wait(f"10.0.0.{n}") > 0 for n in range(5)] == [False, False, True, True, True]
