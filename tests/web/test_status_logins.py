"""Status-page logins over real HTTP: a random session id in the cookie (hashed in the store), logout,
revocation across replicas, and wrong tokens limited per client address."""

from __future__ import annotations

import hashlib

import httpx2
import pytest

from hermes_hub.infra.storage import open_store
from tests.postgres import new_database
from tests.support import serve_process
from tests.web.pages import TOKENS, base_url, cli, hub_config, store_token

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def log_in(http: httpx2.AsyncClient, url: str, token: str, cookie: dict[str, str] | None = None) -> httpx2.Response:
    """Log in as a new browser would (no cookie), or as the one holding ``cookie``."""
    http.cookies.clear()
    return await http.post(f"{url}/status/login", data={"token": token}, headers=cookie or {})


def session_cookie(response: httpx2.Response) -> dict[str, str]:
    name, _, value = response.headers["set-cookie"].split(";")[0].partition("=")
    assert name == "hermes_status"
    return {"Cookie": f"{name}={value}"}


async def test_the_cookie_holds_a_random_login_id_not_the_token_and_the_store_keeps_only_hashes(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            first = await log_in(http, url, TOKENS["bob"])
            second = await log_in(http, url, TOKENS["bob"])
            page = await http.get(f"{url}/status", headers=session_cookie(first))
        async with open_store() as store:  # the served hub's store (HERMES_DATA_DIR)
            rows = await store.raw("SELECT id_hash, token_hash, user_id FROM status_logins")  # type: ignore[attr-defined]
    ids = [session_cookie(r)["Cookie"].partition("=")[2] for r in (first, second)]
    assert first.status_code == 303 and page.status_code == 200 and "bob" in page.text
    assert TOKENS["bob"] not in first.headers["set-cookie"] and ids[0] != ids[1] and len(ids[0]) >= 40
    assert sorted(rows) == sorted((sha256(i), sha256(TOKENS["bob"]), "bob") for i in ids)
    assert not any(i in str(rows) for i in ids) and TOKENS["bob"] not in str(rows)
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/status" in cookie
    assert "secure" not in cookie.lower()  # plain http on loopback; over https the cookie is Secure


async def test_logging_out_ends_the_session_for_that_cookie_for_good(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            cookie = session_cookie(await log_in(http, url, TOKENS["alice"]))
            other = session_cookie(await log_in(http, url, TOKENS["alice"]))  # another browser of alice
            before = await http.get(f"{url}/status.json", headers=cookie)
            out = await http.post(f"{url}/status/logout", headers=cookie)
            after = await http.get(f"{url}/status.json", headers=cookie)
            page = await http.get(f"{url}/status", headers=cookie)
            still = await http.get(f"{url}/status.json", headers=other)
            again = session_cookie(await log_in(http, url, TOKENS["alice"], cookie=other))  # same browser again
            replaced = await http.get(f"{url}/status.json", headers=other)
            current = await http.get(f"{url}/status.json", headers=again)
    assert before.status_code == 200 and before.json()["viewer"]["user"] == "alice"
    assert out.status_code == 303 and 'hermes_status=""' in out.headers["set-cookie"]
    assert after.status_code == 401 and "alpha" not in after.text
    assert page.status_code == 401 and "log in again" in page.text and 'name="token"' in page.text
    assert still.status_code == 200  # logging out one browser leaves the others
    assert replaced.status_code == 401 and current.status_code == 200  # a new login in a browser ends its old one


async def test_a_login_opened_on_one_replica_works_on_the_other_and_ends_on_both_when_its_token_is_revoked(
        pg_server, tmp_path):
    # Tokens are required from the start (auth.required), though the store holds none until the hub runs.
    config = {**hub_config(tokens=False), "storage": {"url": await new_database(pg_server)},
              "memory": {"embedder": "none"}, "auth": {"required": True}}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with serve_process(config, tmp_path / "a") as a, serve_process(config, tmp_path / "b") as b:
        await store_token(a, "dave")  # still live after carol's is revoked
        token, token_id = await store_token(a, "carol")
        url_a, url_b = base_url(a.url), base_url(b.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            cookie = session_cookie(await log_in(http, url_a, token))
            on_a = await http.get(f"{url_a}/status.json", headers=cookie)
            on_b = await http.get(f"{url_b}/status.json", headers=cookie)
            await cli(b, "token", "revoke", token_id)
            after_a = await http.get(f"{url_a}/status.json", headers=cookie)
            after_b = await http.get(f"{url_b}/status/live", headers=cookie)
            again = await log_in(http, url_b, token)
    assert on_a.status_code == on_b.status_code == 200 and on_b.json()["viewer"]["user"] == "carol"
    assert after_a.status_code == 401 and after_b.status_code == 401
    assert again.status_code == 401 and "not valid" in again.text


async def test_the_sixth_wrong_token_in_a_minute_gets_429_while_another_address_still_logs_in(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        # Loopback is 127.0.0.0/8: a client bound to 127.0.0.2 is another address to the hub.
        elsewhere = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx2.AsyncClient(timeout=10) as http, \
                httpx2.AsyncClient(timeout=10, transport=elsewhere) as other:
            wrong = [await log_in(http, url, f"guess-{n}-0123456789") for n in range(5)]
            sixth = await log_in(http, url, "guess-6-0123456789")
            right_here = await log_in(http, url, TOKENS["alice"])
            by_header = await http.get(f"{url}/status.json", headers={"Authorization": f"Bearer {TOKENS['alice']}"})
            there = await log_in(other, url, TOKENS["bob"])
            page = await other.get(f"{url}/status", headers=session_cookie(there))
    assert [r.status_code for r in wrong] == [401] * 5
    assert sixth.status_code == 429 and 0 < int(sixth.headers["retry-after"]) <= 60
    assert f"try again in {sixth.headers['retry-after']} seconds" in sixth.text and "set-cookie" not in sixth.headers
    # the address is refused whatever it sends, until the minute is over: a guess that happens to be right is no help
    assert right_here.status_code == 429 and by_header.status_code == 429
    assert "try again in" in by_header.json()["error_description"]
    assert there.status_code == 303 and page.status_code == 200 and "bob" in page.text


async def test_wrong_bearer_tokens_count_against_the_address_too(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            wrong = [(await http.get(f"{url}/status.json", headers={"Authorization": f"Bearer guess-{n}"})).status_code
                     for n in range(6)]
            form = await log_in(http, url, TOKENS["alice"])
    assert wrong == [401] * 5 + [429]
    assert form.status_code == 429 and "retry-after" in form.headers
