"""Issue 30, items 6 and 11: what anonymous callers of the hub's authorization server can make it keep,
and three smaller gaps, each attacked on the served hub as the issue describes.

* ``/register`` refuses a 10,000-redirect-URI client (413) and fields past their caps (400), keeps a
  budget for the whole hub beside the per-address one (127.0.0.2, 127.0.0.3, … do not bypass it), and
  forgets a client that never signed in a day after it registered, never one that did;
* ``/authorize`` is rate limited per address and hub-wide, refuses parameters longer than it keeps,
  and refuses at once while 1,000 requests wait for consent;
* a public client revokes its own tokens at ``/revoke`` with its ``client_id`` alone (and only its own);
* ``/register`` accepts only https, loopback http and private-use redirect URIs;
* Deny on the consent page needs a hub token, as Approve does.
"""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from hermes_hub.services.identity import token_hash
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import OAuthTokenRecord, utcnow
from tests.oauth.flow import CALLBACK, TOKENS, Raw, hub_config
from tests.support import serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def client(name: str = "Host", uris: list[str] | None = None) -> dict[str, object]:
    return {"client_name": name, "redirect_uris": uris or [CALLBACK], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}


def source(address: str) -> httpx2.AsyncClient:
    """An HTTP client whose connections come from ``address`` (any of 127.0.0.0/8 reaches the hub)."""
    return httpx2.AsyncClient(timeout=20, transport=httpx2.AsyncHTTPTransport(local_address=address))


async def counts() -> dict[str, int]:
    async with open_store() as store:  # the served hub's own database
        return await store.oauth_counts(at=utcnow())


@pytest.fixture
async def raw(tmp_path):
    async with serve_process(hub_config(), tmp_path) as served, source("127.0.0.1") as http:
        flow = Raw(http, served.url)
        await flow.register()
        yield flow


async def test_register_refuses_a_huge_client_and_fields_past_their_caps_and_keeps_nothing(raw):
    huge = await raw.http.post(f"{raw.base}/register", json=client(
        "x" * 50_000, [f"https://app.example/cb/{i}" for i in range(10_000)]))
    assert huge.status_code == 413
    assert huge.json()["error_description"].startswith("the client metadata sent is larger than 32768 bytes, the "
                                                       "most this hub accepts; send at most 10 redirect URIs")
    many = await raw.http.post(f"{raw.base}/register", json=client(uris=[f"{CALLBACK}/{i}" for i in range(11)]))
    assert many.status_code == 400
    assert many.json()["error_description"] == ("redirect_uris has 11 entries; at most 10 are accepted; this hub "
                                                "keeps nothing more, so register again within it")
    named = await raw.http.post(f"{raw.base}/register", json=client("n" * 5000))
    assert named.status_code == 400
    assert named.json()["error_description"].startswith("client_name is 5000 characters long; at most 200")
    long_uri = await raw.http.post(f"{raw.base}/register", json={**client(), "logo_uri": "https://a.example/" + "l" * 3000})
    assert long_uri.status_code == 400 and "logo_uri is 3018 characters long" in long_uri.json()["error_description"]
    assert (await counts())["clients"] == 1  # only the fixture's client
    assert await raw.status((await raw.tokens())["access_token"]) == 200  # and it still signs in


async def test_a_huge_form_to_authorize_token_or_revoke_is_refused_before_it_is_read_whole(raw):
    huge = {"client_id": raw.client_id, "token": "x" * 200_000}
    for path in ("/authorize", "/token", "/revoke"):
        answer = await raw.http.post(f"{raw.base}{path}", data=huge)
        assert answer.status_code == 413, (path, answer.text)
        assert answer.json()["error"] == "invalid_request"
        assert "larger than 65536 bytes, the most this hub accepts" in answer.json()["error_description"]
    assert (await raw.tokens())["access_token"]  # a sign-in of the usual size still goes through


async def test_registrations_have_a_budget_for_the_whole_hub_that_other_addresses_do_not_bypass(raw):
    answers = []
    for address in ("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"):
        async with source(address) as http:
            answers += [(address, await http.post(f"{raw.base}/register", json=client())) for _ in range(20)]
    per_address = [a for a, r in answers if r.status_code == 429 and "from your address" in r.text]
    assert per_address == ["127.0.0.1"]  # the fixture registered once from there already
    hub_wide = [r for a, r in answers if r.status_code == 429 and "on this hub from all addresses" in r.text]
    assert len(hub_wide) == 20 and all(a == "127.0.0.4" for a, r in answers if r in hub_wide)
    assert hub_wide[0].json()["error_description"].startswith("too many client registrations on this hub from all "
                                                               "addresses (at most 60 a minute); try again in")
    assert int(hub_wide[0].headers["retry-after"]) >= 1
    assert (await counts())["clients"] == 60


async def test_a_client_that_never_signed_in_is_forgotten_after_a_day_one_that_did_is_kept(raw):
    used = raw.client_id
    await raw.tokens()  # a grant names it
    unused = (await raw.http.post(f"{raw.base}/register", json=client("Never Used"))).json()["client_id"]
    async with open_store() as store:  # both registered two days ago
        await store.raw("UPDATE oauth_clients SET created_at = created_at - 2 * 86400", write=True)
    assert (await raw.http.post(f"{raw.base}/register", json=client("New"))).status_code == 201  # prunes
    raw.client_id = unused
    gone = await raw.authorize()
    assert gone.status_code == 400 and f"Client ID '{unused}' not found" in gone.json()["error_description"]
    raw.client_id = used
    assert await raw.status((await raw.tokens())["access_token"]) == 200
    assert (await counts())["clients"] == 2


async def test_authorize_refuses_long_parameters_and_is_limited_per_address_and_hub_wide(raw):
    long = await raw.http.post(f"{raw.base}/authorize", data={
        "response_type": "code", "client_id": raw.client_id, "redirect_uri": CALLBACK, "state": "s" * 50_000,
        "code_challenge": raw.challenge, "code_challenge_method": "S256"})
    assert long.status_code == 302  # to the client, as RFC 6749 says, with what was wrong
    said = parse_qs(urlsplit(long.headers["location"]).query)["error_description"][0]
    assert said == "state is 50000 characters long; at most 1024 are accepted; this hub keeps nothing longer, so send it shorter"
    assert (await counts())["requests"] == 0

    statuses: dict[str, list[int]] = {}
    for address in ("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"):
        async with source(address) as http:
            raw.http, first = http, address == "127.0.0.1"
            statuses[address] = [(await raw.authorize()).status_code for _ in range(30 if first else 31)]
    assert statuses["127.0.0.1"] == [302] * 29 + [429]  # the long one above counted
    assert statuses["127.0.0.2"] == statuses["127.0.0.3"] == [302] * 30 + [429]
    assert statuses["127.0.0.4"] == [302] * 30 + [429]  # 1 + 29 + 30 + 30 + 30: the hub's 120 are spent
    assert set(statuses["127.0.0.5"]) == {429}
    async with source("127.0.0.6") as http:
        refused = await http.get(f"{raw.base}/authorize", params={"client_id": raw.client_id})
    assert refused.status_code == 429
    assert refused.json()["error_description"].startswith("too many sign-in requests (/authorize) on this hub from "
                                                          "all addresses (at most 120 a minute); try again in")
    assert (await counts())["requests"] == 119


async def test_a_hub_holding_a_thousand_pending_sign_ins_refuses_the_next_at_once(raw):
    now = utcnow()
    async with open_store() as store:
        for i in range(1000):
            await store.add_oauth_token(OAuthTokenRecord(token_hash(f"pending-{i}"), "request", None, raw.client_id,
                                                         json.dumps({}), now, now + timedelta(minutes=10)))
    answer = await raw.authorize()
    assert answer.status_code == 302 and "error=temporarily_unavailable" in answer.headers["location"]
    said = parse_qs(urlsplit(answer.headers["location"]).query)["error_description"][0]
    assert said.startswith("this hub already holds 1000 sign-in requests waiting for consent, the most it keeps")
    assert (await counts())["requests"] == 1000


async def test_a_public_client_revokes_its_own_tokens_with_its_client_id_alone(raw):
    tokens = await raw.tokens()
    other = Raw(raw.http, raw.mcp)
    await other.register("Other Host")
    foreign = await raw.http.post(f"{raw.base}/revoke", data={"token": tokens["access_token"],
                                                              "client_id": other.client_id})
    assert foreign.status_code == 200 and await raw.status(tokens["access_token"]) == 200  # not its token
    done = await raw.http.post(f"{raw.base}/revoke", data={"token": tokens["refresh_token"],
                                                           "client_id": raw.client_id})
    assert done.status_code == 200, done.text
    assert await raw.status(tokens["access_token"]) == 401
    again = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert again.status_code == 400
    missing = await raw.http.post(f"{raw.base}/revoke", data={"client_id": raw.client_id})
    assert missing.status_code == 400
    assert missing.json()["error_description"] == "send the access or refresh token to revoke in the form field token"


async def test_register_accepts_only_https_loopback_http_and_private_use_redirect_uris(raw):
    for uri in ("javascript:alert(document.cookie)", "data:text/html,<script>x</script>", "file:///etc/passwd",
                "http://evil.example/callback", "https://app.example/cb#frag", "vbscript:msgbox"):
        answer = await raw.http.post(f"{raw.base}/register", json=client(uris=[uri]))
        assert answer.status_code == 400, uri
        assert answer.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata"), uri
        said = answer.json()["error_description"]
        assert said.startswith("redirect URI") or "redirect_uris" in said, (uri, said)
    refused = await raw.http.post(f"{raw.base}/register", json=client(uris=["javascript:alert(1)"]))
    assert refused.json()["error_description"].startswith(
        "redirect URI 'javascript:alert(1)' is not allowed: use https, http on a loopback address (127.0.0.1, "
        "[::1], localhost) or a private-use scheme in reverse-DNS form such as com.example.app:/callback")
    for uri in ("https://app.example/cb", "http://127.0.0.1:9/cb", "http://[::1]:9/cb", "http://localhost:9/cb",
                "com.example.app:/oauth/callback"):
        assert (await raw.http.post(f"{raw.base}/register", json=client(uris=[uri]))).status_code == 201, uri
    assert (await counts())["clients"] == 6


async def test_deny_needs_a_hub_token_as_approve_does(raw):
    asked = await raw.authorize()
    for token in ("", "not-a-token"):
        denied = await raw.consent(asked.headers["location"], token=token, decision="deny")
        assert denied.status_code == 401 and "That token is not valid" in denied.text
    assert (await counts())["requests"] == 1  # still pending: nobody decided
    right = await raw.consent(asked.headers["location"], token=TOKENS["alice"], decision="deny")
    assert right.status_code == 303 and "error=access_denied" in right.headers["location"]
