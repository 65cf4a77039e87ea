import mcp.types as types
import pytest
from mcp import Client, MCPError

from hermes_hub.demo.notes import build_server

pytestmark = pytest.mark.anyio

TEMPLATE = types.ResourceTemplateReference(uri="notes://note/{id}")
PROMPT = types.PromptReference(name="summarize_note")


async def create(client: Client, title: str, body: str) -> dict:
    result = await client.call_tool("create_note", {"title": title, "body": body})
    assert not result.is_error, result.content
    return result.structured_content


async def search(client: Client, query: str) -> list[str]:
    result = await client.call_tool("search_notes", {"query": query})
    assert not result.is_error, result.content
    return [n["id"] for n in result.structured_content["notes"]]


async def listed_uris(client: Client) -> list[str]:
    return [r.uri for r in (await client.list_resources()).resources]


async def test_a_created_note_gets_a_slug_id_from_its_title(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        note = await create(client, "Trip to Zürich!", "Pack the adapter.")
    assert note == {"id": "trip-to-zurich", "title": "Trip to Zürich!", "body": "Pack the adapter."}


async def test_notes_with_the_same_title_get_distinct_ids(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        ids = [(await create(client, "Groceries", f"list {i}"))["id"] for i in range(3)]
    assert ids == ["groceries", "groceries-2", "groceries-3"]


async def test_a_title_without_letters_or_digits_gets_a_generic_id(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        assert (await create(client, "???", "hmm"))["id"] == "note"


async def test_an_empty_title_is_refused(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        result = await client.call_tool("create_note", {"title": "", "body": "text"})
        assert result.is_error
        assert "title must not be empty: give the note a short title" in result.content[0].text
        assert await search(client, "") == []


async def test_search_is_a_case_insensitive_substring_match_over_title_and_body(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        await create(client, "Groceries", "Milk, EGGS, bread")
        await create(client, "Easter eggs", "Hide them in the garden")
        await create(client, "Books", "Dune")
        assert await search(client, "eggs") == ["groceries", "easter-eggs"]
        assert await search(client, "GARDEN") == ["easter-eggs"]
        assert await search(client, "nothing like this") == []
        assert await search(client, "") == ["groceries", "easter-eggs", "books"]


async def test_each_note_is_listed_as_a_resource(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        assert await listed_uris(client) == []
        await create(client, "Groceries", "Milk")
        resources = (await client.list_resources()).resources
    assert [(r.uri, r.name, r.title, r.mime_type) for r in resources] == [
        ("notes://note/groceries", "groceries", "Groceries", "text/markdown")
    ]


async def test_notes_written_by_another_process_are_listed_and_survive_a_restart(tmp_path):
    async with Client(build_server(tmp_path)) as running, Client(build_server(tmp_path)) as other:
        await create(other, "Written elsewhere", "by a second server on the same data dir")
        assert await listed_uris(running) == ["notes://note/written-elsewhere"]
    async with Client(build_server(tmp_path)) as restarted:
        assert await listed_uris(restarted) == ["notes://note/written-elsewhere"]
        assert await search(restarted, "second server") == ["written-elsewhere"]


async def test_a_note_is_read_through_the_template_as_markdown(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        await create(client, "Groceries", "Milk, eggs")
        templates = (await client.list_resource_templates()).resource_templates
        contents = (await client.read_resource("notes://note/groceries")).contents
    assert [t.uri_template for t in templates] == ["notes://note/{id}"]
    assert [(c.uri, c.mime_type, c.text) for c in contents] == [
        ("notes://note/groceries", "text/markdown", "# Groceries\n\nMilk, eggs")
    ]


async def test_reading_an_unknown_note_is_a_clear_error(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        with pytest.raises(MCPError) as error:
            await client.read_resource("notes://note/nope")
    assert error.value.code == types.INVALID_PARAMS
    assert error.value.message == "No note with id 'nope'; call search_notes or list resources to find note ids"


async def test_the_summarize_prompt_asks_the_user_to_summarize_the_note_text(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        await create(client, "Meeting", "We agreed to ship on Friday.")
        prompts = (await client.list_prompts()).prompts
        result = await client.get_prompt("summarize_note", {"note_id": "meeting"})
    assert [(p.name, [a.name for a in p.arguments]) for p in prompts] == [("summarize_note", ["note_id"])]
    [message] = result.messages
    assert message.role == "user"
    assert message.content.text.startswith("Please summarize the following note")
    assert "# Meeting\n\nWe agreed to ship on Friday." in message.content.text


async def test_the_summarize_prompt_refuses_an_unknown_note(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        with pytest.raises(MCPError) as error:
            await client.get_prompt("summarize_note", {"note_id": "nope"})
    assert error.value.code == types.INVALID_PARAMS
    assert error.value.message == "No note with id 'nope'; call search_notes or list resources to find note ids"


async def test_note_ids_are_completed_by_prefix_for_the_prompt_and_the_template(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        for title in ["Groceries", "Groceries", "Garden", "Books"]:
            await create(client, title, "")
        for_prompt = (await client.complete(PROMPT, {"name": "note_id", "value": "gr"})).completion
        for_template = (await client.complete(TEMPLATE, {"name": "id", "value": "g"})).completion
        everything = (await client.complete(TEMPLATE, {"name": "id", "value": ""})).completion
    assert (for_prompt.values, for_prompt.total, for_prompt.has_more) == (["groceries", "groceries-2"], 2, False)
    assert for_template.values == ["groceries", "groceries-2", "garden"]
    assert everything.values == ["groceries", "groceries-2", "garden", "books"]


async def test_other_arguments_get_no_completions(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        await create(client, "Groceries", "")
        other_prompt = types.PromptReference(name="something_else")
        assert (await client.complete(other_prompt, {"name": "note_id", "value": ""})).completion.values == []
        assert (await client.complete(PROMPT, {"name": "other", "value": ""})).completion.values == []
