"""The vault seals secrets before the store sees them, on both backends, and says plainly when a key is wrong."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hermes_hub.infra.storage import Store
from hermes_hub.services.vault import KEY_ENV, SecretKey, Vault, VaultError, key_file, load_key

KEY = "k" * 40


def _key(text: str = KEY, shared: bool = True) -> SecretKey:
    return SecretKey.from_text(text, KEY_ENV, shared=shared)


async def test_values_round_trip_and_the_store_holds_only_ciphertext(store: Store) -> None:
    vault = Vault(store, _key())
    await vault.put("alice", "secret", "github", "ghp_alice_token_1234")
    await vault.put("bob", "secret", "github", "ghp_bob_token_5678")
    assert await vault.get("alice", "secret", "github") == "ghp_alice_token_1234"
    assert await vault.get("bob", "secret", "github") == "ghp_bob_token_5678"
    assert await vault.get("alice", "secret", "notion") is None
    raw = await store.get_sealed("alice", "secret", "github")
    assert raw is not None and b"ghp_alice" not in raw.sealed and raw.key_id == vault.key.id
    await vault.put("alice", "secret", "github", "ghp_alice_token_new")  # a write replaces the row
    assert await vault.get("alice", "secret", "github") == "ghp_alice_token_new"
    assert [(n.user_id, n.name) for n in await vault.names(kind="secret")] == [("alice", "github"), ("bob", "github")]
    assert [n.name for n in await vault.names("bob")] == ["github"]
    assert await vault.delete("alice", "secret", "github") is True
    assert await vault.delete("alice", "secret", "github") is False
    assert await vault.get("alice", "secret", "github") is None
    assert await vault.get("bob", "secret", "github") == "ghp_bob_token_5678"  # the other user's stays


async def test_a_sealed_value_moved_to_another_row_does_not_open(store: Store) -> None:
    vault = Vault(store, _key())
    await vault.put("alice", "oauth", "notion", '{"access_token": "a"}')
    rec = await store.get_sealed("alice", "oauth", "notion")
    assert rec is not None
    moved = type(rec)("mallory", rec.kind, rec.name, rec.key_id, rec.sealed, rec.updated_at)
    await store.put_sealed(moved)
    with pytest.raises(VaultError, match="does not open under this hub's key .*set it again"):
        await vault.get("mallory", "oauth", "notion")


async def test_another_key_is_named_with_the_fix_and_quotes_no_secret(store: Store) -> None:
    await Vault(store, _key()).put("alice", "oauth", "linear", "refresh-token-xyz")
    with pytest.raises(VaultError) as shared:
        await Vault(store, _key("z" * 40)).get("alice", "oauth", "linear")
    assert "every replica needs the same HERMES_SECRET_KEY" in str(shared.value)
    with pytest.raises(VaultError) as local:
        await Vault(store, SecretKey.from_text("z" * 40, "/data/secret.key", shared=False)).get(
            "alice", "oauth", "linear")
    assert "comes from /data/secret.key" in str(local.value) and KEY_ENV in str(local.value)
    for e in (shared.value, local.value):
        assert "refresh-token-xyz" not in str(e) and "z" * 32 not in str(e)


def test_a_short_key_is_refused_with_how_to_make_one() -> None:
    with pytest.raises(VaultError, match="holds 6 characters; a secret key needs at least 32 .*token_urlsafe"):
        load_key("sqlite:///x/hub.db", env={KEY_ENV: "abcdef"})


def test_without_the_variable_a_key_file_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'data' / 'hub.db'}"
    first = load_key(url, env={})
    path = key_file(url, {})
    assert path == tmp_path / "data" / "secret.key" and first.source == str(path) and not first.shared
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_key(url, env={}).id == first.id  # read back, not remade
    assert KEY not in repr(first) and first.material.hex() not in repr(first)
    os.chmod(path, 0o644)
    with pytest.raises(VaultError, match=r"can be read by other users \(mode 644\): run `chmod 600 "):
        load_key(url, env={})


def test_postgres_without_the_variable_keeps_its_key_in_the_data_directory(tmp_path: Path) -> None:
    env = {"HERMES_DATA_DIR": str(tmp_path / "d")}
    key = load_key("postgresql://u@h/db", env=env)
    assert key.source == str(tmp_path / "d" / "secret.key") and not key.shared
    assert load_key("postgresql://u@h/db", env={**env, KEY_ENV: KEY}).shared
