"""Every refusal of the hub's OAuth is a clear error a person can act on, and leaves nothing usable behind."""

from __future__ import annotations

import logging

import httpx2
import pytest

from hermes_hub.infra.storage import open_store
from tests.oauth.flow import CALLBACK, TOKENS, Raw, hub_config
from tests.support import serve_process

pytestmark = pytest.mark.anyio


@pytest.fixture
async def raw(tmp_path):
    async with serve_process(hub_config(), tmp_path) as served, httpx2.AsyncClient(timeout=10) as http:
        flow = Raw(http, served.url)
        await flow.register()
        yield flow


@pytest.mark.slow
async def test_a_redirect_uri_the_client_did_not_register_is_refused_at_authorize(raw):
    answer = await raw.authorize(redirect_uri="http://127.0.0.1:9/elsewhere")
    assert answer.status_code == 400
    assert "Redirect URI 'http://127.0.0.1:9/elsewhere' not registered for client" in answer.json()["error_description"]


@pytest.mark.slow
async def test_a_resource_that_is_not_an_endpoint_of_this_hub_is_refused_naming_the_endpoints(raw):
    answer = await raw.authorize(resource="https://elsewhere.example/mcp")
    assert answer.status_code == 302  # the client's redirect URI hears of it, as RFC 6749 says
    location = answer.headers["location"]
    assert location.startswith(CALLBACK) and "error=invalid_target" in location
    assert "is+not+an+endpoint+of+this+hub" in location and "%2Fmcp%2Fwork" in location


@pytest.mark.slow
async def test_pkce_plain_is_refused_only_s256_is_accepted(raw):
    answer = await raw.authorize(code_challenge_method="plain")
    assert "error=invalid_request" in answer.headers["location"] and "S256" in answer.headers["location"]


@pytest.mark.slow
async def test_a_missing_pkce_verifier_is_refused(raw):
    answer = await raw.exchange(await raw.code(), code_verifier="")
    assert answer.status_code == 400
    assert answer.json()["error_description"] == ("missing PKCE code_verifier: this hub accepts only authorization "
                                                  "codes with PKCE (S256)")


@pytest.mark.slow
async def test_a_wrong_pkce_verifier_is_refused(raw):
    answer = await raw.exchange(await raw.code(), code_verifier="x" * 50)
    assert "incorrect PKCE code_verifier" in answer.json()["error_description"]


@pytest.mark.slow
async def test_a_different_redirect_uri_at_the_token_endpoint_is_refused(raw):
    answer = await raw.exchange(await raw.code(), redirect_uri="http://127.0.0.1:9/other")
    assert "redirect_uri differs from the one sent to /authorize" in answer.json()["error_description"]


@pytest.mark.slow
async def test_an_expired_code_is_refused_with_how_long_codes_live(raw):
    code = await raw.code()
    async with open_store() as store:  # the served hub's own database: its code, five minutes on
        await store.raw("UPDATE oauth_tokens SET expires_at = expires_at - 600 WHERE kind = 'code'", write=True)
    answer = await raw.exchange(code)
    assert answer.status_code == 400
    assert answer.json()["error_description"] == ("authorization code has expired (codes live 5 minutes); start "
                                                  "the sign-in again from your MCP host")


@pytest.mark.slow
async def test_a_reused_code_is_refused_and_revokes_the_tokens_it_issued(raw):
    code = await raw.code()
    first = await raw.exchange(code)
    assert first.status_code == 200
    access = first.json()["access_token"]
    assert await raw.status(access) == 200
    again = await raw.exchange(code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert "already used; for safety every token it issued is now revoked" in again.json()["error_description"]
    assert await raw.status(access) == 401


@pytest.mark.slow
async def test_refresh_tokens_rotate_and_a_spent_one_ends_the_sign_in(raw):
    tokens = await raw.tokens()
    renewed = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert renewed.status_code == 200, renewed.text
    fresh = renewed.json()
    assert fresh["refresh_token"] != tokens["refresh_token"] and fresh["access_token"] != tokens["access_token"]
    assert fresh["expires_in"] == 3600
    assert await raw.status(fresh["access_token"]) == 200
    replayed = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert "refresh token was already used" in replayed.json()["error_description"]
    assert await raw.status(fresh["access_token"]) == 401


@pytest.mark.slow
async def test_the_revocation_endpoint_ends_the_sign_in(raw):
    tokens = await raw.tokens()
    done = await raw.http.post(f"{raw.base}/revoke", data={"token": tokens["access_token"], "client_id": raw.client_id})
    assert done.status_code == 200
    assert await raw.status(tokens["access_token"]) == 401
    again = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert again.status_code == 400


@pytest.mark.slow
async def test_a_wrong_hub_token_on_the_consent_page_is_refused_and_the_request_stays_open(raw):
    asked = await raw.authorize()
    wrong = await raw.consent(asked.headers["location"], token="not-a-token")
    assert wrong.status_code == 401 and "That token is not valid" in wrong.text
    right = await raw.consent(asked.headers["location"], token=TOKENS["alice"])
    assert right.status_code == 303 and "code=" in right.headers["location"]


async def test_denying_sends_access_denied_back_and_the_request_cannot_be_approved_after(raw):
    asked = await raw.authorize()
    denied = await raw.consent(asked.headers["location"], decision="deny")
    assert denied.status_code == 303 and "error=access_denied" in denied.headers["location"]
    late = await raw.consent(asked.headers["location"])
    assert late.status_code == 400 and "expired or was already answered" in late.text


async def test_no_secret_of_the_flow_reaches_the_hub_log(raw, tmp_path):
    asked = await raw.authorize()
    request_id = asked.headers["location"].rsplit("/", 1)[1]
    code = (await raw.consent(asked.headers["location"])).headers["location"].split("code=")[1].split("&")[0]
    tokens = (await raw.exchange(code)).json()
    await raw.status(tokens["access_token"])
    log = (tmp_path / "hub.log").read_text()
    assert "authentication: required" in log  # the hub's log, read after the whole flow
    for secret in (request_id, code, tokens["access_token"], tokens["refresh_token"], raw.verifier):
        assert secret not in log


def test_a_consent_page_s_request_id_is_hidden_in_the_access_log_when_request_lines_are_shown():
    # request lines are DEBUG (issue 33); with them shown, the pending sign-in's id stays out of the line
    import hermes_hub.app.web.consent  # noqa: F401  (puts its filter on uvicorn.access at import)

    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', (
        "127.0.0.1:5000", "GET", "/status/authorize/req_SECRET123?x=1", "1.1", 200), None)
    for f in logging.getLogger("uvicorn.access").filters:
        f.filter(record)
    assert "req_SECRET123" not in record.getMessage()
    assert "/status/authorize/<hidden>?x=1" in record.getMessage()


async def test_a_consent_answer_posted_from_another_site_is_refused(raw):
    asked = await raw.authorize()
    forged = await raw.http.post(asked.headers["location"], data={"token": TOKENS["alice"], "decision": "approve"},
                                 headers={"Origin": "https://evil.example"})
    assert forged.status_code == 403


@pytest.mark.slow
async def test_registrations_from_one_address_are_limited_per_minute(raw):
    answers = [await raw.http.post(f"{raw.base}/register", json={"redirect_uris": [CALLBACK], "client_name": "x"})
               for _ in range(20)]
    assert [a.status_code for a in answers].count(429) == 1  # the fixture registered once already
    assert "too many client registrations from your address" in answers[-1].json()["error_description"]
    assert int(answers[-1].headers["retry-after"]) >= 1


@pytest.mark.slow
async def test_an_access_token_past_its_hour_is_refused_and_the_refresh_token_renews_it(raw):
    tokens = await raw.tokens()
    async with open_store() as store:  # the served hub's own database: an hour on
        await store.raw("UPDATE oauth_tokens SET expires_at = expires_at - 3601 WHERE kind = 'access'", write=True)
    expired = await raw.http.post(raw.mcp, json={}, headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert expired.status_code == 401
    assert expired.json()["error_description"].startswith("access token expired; refresh it or sign in again")
    renewed = (await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])).json()
    assert await raw.status(renewed["access_token"]) == 200
