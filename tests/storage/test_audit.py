"""The audit wrapper, masking, queries and retention, over a real store."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest

from hermes_hub.services import audit
from hermes_hub.infra.errors import Forbidden, InvalidInput, NotFound, SessionBusy
from hermes_hub.infra.masking import Masker
from hermes_hub.infra.storage import Store, open_store
from hermes_hub.infra.storage.records import AuditRecord, utcnow


def test_values_under_secret_looking_keys_are_masked_at_any_depth():
    args = {
        "query": "weather", "api_key": "sk-1", "accessToken": "t", "Authorization": "Bearer abc",
        "nested": {"password": "hunter2", "list": [{"client_secret": "s"}, {"x-api-key": "k"}]},
        "keyword": "kept", "max_tokens": 100, "monkey": "kept", "token": None,
    }
    assert Masker()(args) == {
        "query": "weather", "api_key": "***", "accessToken": "***", "Authorization": "***",
        "nested": {"password": "***", "list": [{"client_secret": "***"}, {"x-api-key": "***"}]},
        "keyword": "kept", "max_tokens": 100, "monkey": "kept", "token": None,
    }


def test_bearer_credentials_inside_strings_are_masked_by_default():
    assert Masker()({"header": "Bearer eyJhbGciOi.xyz"}) == {"header": "Bearer ***"}


def test_configured_patterns_mask_emails_phones_and_custom_regexes_in_string_values():
    masker = Masker(("email", "phone", r"ACME-\d+"))
    got = masker({"to": "ann.lee+x@example.co.uk", "body": "call +86 138 0013 8000 or 555-123-4567 re ACME-42",
                  "count": 5, "when": "2026-01-15"})
    assert got == {"to": "***", "body": "call *** or *** re ***", "count": 5, "when": "2026-01-15"}


def test_a_bad_mask_pattern_fails_at_startup_naming_it():
    with pytest.raises(InvalidInput, match=r"audit mask pattern '\(unclosed' is not a valid regular expression"):
        Masker(("(unclosed",))


def test_long_argument_strings_are_cut_with_their_length():
    got = Masker()({"text": "x" * 5000}, limit=audit.MAX_STRING)["text"]
    assert got.endswith("…(5,000 chars)") and len(got) < 1100


async def test_a_successful_call_writes_one_row_with_masked_arguments_and_timing(store: Store):
    async with audit.record(store, user_id="alice", tool="calendar_query", server="calendar", session_id="ses_1",
                            arguments={"day": "today", "token": "abc"}) as rec:
        rec.result_size = 123
    (row,) = await audit.query(store, "alice")
    assert (row.tool, row.server, row.session_id, row.outcome, row.error, row.result_size) == (
        "calendar_query", "calendar", "ses_1", "ok", None, 123)
    assert row.arguments == {"day": "today", "token": "***"} and row.duration_ms >= 0
    assert abs((utcnow() - row.at).total_seconds()) < 60


@pytest.mark.parametrize(("exc", "outcome", "error"), [
    (ValueError("boom"), "error", "ValueError: boom"),
    (TimeoutError("no answer in 60s"), "timeout", "no answer in 60s"),
    (Forbidden("role user may not call admin_reload"), "refused", "role user may not call admin_reload"),
    (SessionBusy("ses_1"), "refused", "session 'ses_1' is busy"),
    (NotFound("session", "ses_x"), "tool_error", "session 'ses_x' not found"),
])
async def test_a_call_that_raises_is_recorded_with_its_outcome_and_the_exception_propagates(
        store: Store, exc, outcome, error):
    with pytest.raises(type(exc)):
        async with audit.record(store, user_id="alice", tool="t", arguments={"password": "p"}):
            raise exc
    (row,) = await audit.query(store, "alice")
    assert row.outcome == outcome and row.error.startswith(error) and row.arguments == {"password": "***"}


async def test_a_tool_error_result_and_a_cancelled_call_are_recorded(store: Store):
    async with audit.record(store, user_id="alice", tool="notes_add") as rec:
        rec.tool_error("title is required")
    with anyio.fail_after(5):
        with anyio.CancelScope() as scope:
            async with audit.record(store, user_id="alice", tool="slow_tool"):
                scope.cancel()
                await anyio.sleep_forever()
    rows = await audit.query(store, "alice")
    assert [(r.tool, r.outcome, r.error) for r in rows] == [
        ("slow_tool", "error", "cancelled"), ("notes_add", "tool_error", "title is required")]


async def test_users_read_only_their_own_rows_and_admins_read_everyones(store: Store):
    for user, tool in (("alice", "a_x"), ("bob", "a_x"), ("bob", "a_y")):
        async with audit.record(store, user_id=user, tool=tool):
            pass
    assert {r.user_id for r in await audit.query(store, "alice")} == {"alice"}
    with pytest.raises(Forbidden, match="only admins may read another user's audit; drop the user filter"):
        await audit.query(store, "alice", user="bob")
    assert len(await audit.query(store, "root", admin=True)) == 3
    assert [r.tool for r in await audit.query(store, "root", admin=True, user="bob", tool="a_y")] == ["a_y"]
    assert len(await audit.query(store, "bob", since=timedelta(hours=1))) == 2


async def test_retention_deletes_rows_older_than_the_setting(store: Store):
    now = utcnow()
    for days in (1, 29, 31, 400):
        await store.add_audit(AuditRecord(now - timedelta(days=days), "alice", "t", "ok", 1.0))
    assert await audit.prune(store, days=30, now=now) == 2
    assert len(await audit.query(store, "alice")) == 2
    with pytest.raises(InvalidInput, match="positive number of days"):
        await audit.prune(store, days=0)


async def test_a_failed_audit_write_is_logged_and_never_fails_the_call(tmp_path, caplog):
    async with open_store(f"sqlite:///{tmp_path / 'hub.db'}") as closed:
        pass
    async with audit.record(closed, user_id="alice", tool="notes_add") as rec:
        rec.result_size = 1
    assert "could not write the audit row of notes_add for alice" in caplog.text
    assert "is closed" in caplog.text
