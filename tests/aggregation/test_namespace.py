"""Namespaces and filters: pure functions, no network."""

import pytest

from hermes_hub.core.aggregation.filters import NameFilter
from hermes_hub.core.aggregation.namespace import Namespace, name_problem

URIS = ["notes://note/{id}", "file:///tmp/a b.txt", "urn:isbn:123", "http://x.com/a?b=1#c", "plain", "notes://fs/x"]


@pytest.mark.parametrize("uri", URIS)
def test_every_uri_round_trips_through_its_namespace(uri):
    ns = Namespace("fs")
    assert ns.original_uri(ns.uri(uri)) == uri


def test_the_prefix_becomes_the_first_authority_segment_so_the_uri_stays_valid():
    ns = Namespace("fs")
    assert ns.uri("file:///tmp/a.txt") == "file://fs//tmp/a.txt"
    assert ns.uri("notes://note/{id}") == "notes://fs/note/{id}"
    assert ns.uri("urn:isbn:123") == "urn:fs/isbn:123"


def test_a_uri_of_another_namespace_is_not_claimed():
    assert Namespace("fs").original_uri("file://other//tmp") is None
    assert Namespace("fs").original("other_tool") is None
    assert Namespace("fs").original("fs_") is None


def test_names_join_prefix_and_separator_and_an_empty_prefix_changes_nothing():
    assert Namespace("cal", "__").name("query") == "cal__query"
    assert Namespace("cal", "__").original("cal__query") == "query"
    assert Namespace("").name("query") == "query"
    assert Namespace("").uri("a://b") == "a://b"


def test_names_hosts_reject_are_explained():
    assert name_problem("calendar_query") is None
    assert "64" in name_problem("x" * 65)
    assert "characters outside" in name_problem("cal.query")


def test_deny_wins_over_allow_and_no_allow_list_admits_everything():
    f = NameFilter.of(["*_note*"], ["search_*"])
    assert f("create_note") and not f("search_notes") and not f("other")
    assert NameFilter.of(None)("anything")
