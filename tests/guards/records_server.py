"""A customer-records MCP server for the masking tests: results full of what ``guards.mask`` finds.

    python -m tests.guards.records_server

``customer`` answers with structured content (and its JSON as text), ``document`` with an embedded text
resource, ``fail`` with an error naming a phone number, ``wait`` holds a call open until ``seconds`` pass,
``contact`` echoes the arguments it was called with (what the tool got, whatever the hub keeps of them).
"""

from __future__ import annotations

import anyio
import mcp.types as types
from mcp.server import MCPServer
from pydantic import BaseModel

PHONE, PHONE_INTL, LANDLINE = "138 1234 5678", "+86 138-1234-5678", "010-12345678"
CN_ID, CARD, EMAIL = "11010519491231002X", "4111 1111 1111 1111", "ann.lee@example.com"
IPV4, IPV6, API_KEY = "192.168.20.7", "2001:db8::17", "sk-proj-Q2x9Lm4Rt8Vb6Nc1Zp0Ws"
SECRETS = (PHONE, PHONE_INTL, LANDLINE, CN_ID, CARD, EMAIL, IPV4, IPV6, API_KEY, "CUST-0042")
HARMLESS = "order 20261201123 of 2026-01-15, version 2.10.3, ISBN 978-7-111-12345-6"


class Customer(BaseModel):
    name: str
    phone: str
    mobile: str
    id_number: str
    card: str
    email: str
    note: str


def build() -> MCPServer:
    mcp = MCPServer("records")

    @mcp.tool()
    def customer(customer_id: str) -> Customer:
        """One customer's record."""
        return Customer(name="Ann Lee", phone=PHONE, mobile=PHONE_INTL, id_number=CN_ID, card=CARD, email=EMAIL,
                        note=f"called from {PHONE} again; last login from {IPV4} and {IPV6}; key {API_KEY}; "
                             f"{HARMLESS}; office {LANDLINE}; file CUST-0042")

    @mcp.tool()
    def document() -> list[types.ContentBlock]:
        """The customer file as an embedded resource."""
        return [types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///customers/ann.txt", mime_type="text/plain", text=f"Ann Lee, {EMAIL}, card {CARD}"))]

    @mcp.tool()
    def fail() -> types.CallToolResult:
        """Always fails, naming a phone number."""
        return types.CallToolResult(is_error=True, content=[types.TextContent(
            type="text", text=f"no customer answers at {PHONE}")])

    @mcp.tool()
    def contact(phone: str, id_number: str, email: str, order: str = "") -> str:
        """Echoes what it was called with."""
        return f"sent to {phone} / {id_number} / {email} / {order}"

    @mcp.tool()
    async def wait(seconds: float) -> str:
        """Returns after ``seconds``."""
        await anyio.sleep(seconds)
        return "waited"

    return mcp


if __name__ == "__main__":
    build().run("stdio")
