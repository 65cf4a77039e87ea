"""Demo notes MCP server: notes as tools, resources, a prompt and completions, stored in notes.json."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import mcp.types as types
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from pydantic import BaseModel

from hermes_hub.demo.command import serve
from hermes_hub.demo.data import JsonStore, resolve_data_dir

NOTE_URI = "notes://note/{id}"


class Note(BaseModel):
    id: str
    title: str
    body: str


class Notes(BaseModel):
    notes: list[Note]


def _slug(title: str) -> str:
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:40].strip("-") or "note"


def _missing(note_id: str) -> str:
    return f"No note with id {note_id!r}; call search_notes or list resources to find note ids"


class NotesServer(MCPServer):
    """An MCPServer whose resources/list names every stored note.

    The list is read from disk on each request rather than registered per note,
    so notes written by another process (or before a restart) are listed too.
    """

    def __init__(self, store: JsonStore) -> None:
        super().__init__("notes", instructions="Personal notes. Each note is also a resource at notes://note/{id}.")
        self.store = store

    def notes(self) -> list[Note]:
        return [Note(**n) for n in self.store.read()["notes"]]

    def get(self, note_id: str) -> Note | None:
        return next((n for n in self.notes() if n.id == note_id), None)

    async def list_resources(self) -> list[types.Resource]:
        listed = [
            types.Resource(uri=NOTE_URI.format(id=n.id), name=n.id, title=n.title, mime_type="text/markdown")
            for n in self.notes()
        ]
        return [*await super().list_resources(), *listed]


def build_server(data_dir: Path | None = None) -> NotesServer:
    mcp = NotesServer(JsonStore(resolve_data_dir(data_dir) / "notes.json", {"notes": []}))

    @mcp.tool()
    def create_note(title: str, body: str) -> Note:
        """Create a note; its id is a slug of the title (made unique)."""
        if not title.strip():
            raise ToolError("title must not be empty: give the note a short title")
        with mcp.store.update() as data:
            taken = {n["id"] for n in data["notes"]}
            note_id = base = _slug(title)
            suffix = 2
            while note_id in taken:
                note_id, suffix = f"{base}-{suffix}", suffix + 1
            note = Note(id=note_id, title=title.strip(), body=body)
            data["notes"].append(note.model_dump())
        return note

    @mcp.tool()
    def search_notes(query: str) -> Notes:
        """Find notes whose title or body contains query (case-insensitive); an empty query lists all notes."""
        needle = query.casefold()
        return Notes(notes=[n for n in mcp.notes() if needle in n.title.casefold() or needle in n.body.casefold()])

    @mcp.resource(NOTE_URI, name="note", title="Note by id", mime_type="text/markdown")
    def read_note(id: str) -> str:
        """A note's title and body, as Markdown."""
        if (note := mcp.get(id)) is None:
            raise ResourceNotFoundError(_missing(id))
        return f"# {note.title}\n\n{note.body}"

    @mcp.prompt()
    def summarize_note(note_id: str) -> str:
        """Ask the model to summarize one note."""
        if (note := mcp.get(note_id)) is None:
            # MCPError passes through unchanged; other exceptions become a generic "Error rendering prompt".
            raise MCPError(types.INVALID_PARAMS, _missing(note_id))
        return f"Please summarize the following note in a few sentences.\n\n# {note.title}\n\n{note.body}"

    @mcp.completion()
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: types.CompletionArgument,
        context: types.CompletionContext | None,
    ) -> types.Completion | None:
        wanted = (
            isinstance(ref, types.PromptReference) and ref.name == "summarize_note" and argument.name == "note_id"
        ) or (isinstance(ref, types.ResourceTemplateReference) and ref.uri == NOTE_URI and argument.name == "id")
        if not wanted:
            return None
        ids = [n.id for n in mcp.notes() if n.id.startswith(argument.value)]
        return types.Completion(values=ids[:100], total=len(ids), has_more=len(ids) > 100)  # spec caps values at 100

    return mcp


def main(argv: list[str] | None = None, prog: str = "python -m hermes_hub.demo.notes") -> None:
    serve(build_server, prog, __doc__, argv)


if __name__ == "__main__":
    main()
