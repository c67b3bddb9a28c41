"""The address guard. Its decisions are tested directly; the only connections made are to
127.0.0.1 (a server these tests start), so a broken guard cannot reach another machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from sourcewise import AddressNotAllowed, load_settings
from sourcewise.net.fetch import Fetcher
from sourcewise.net.guard import AddressGuard, refusal

from servers import LocalServer, Reply


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.5.4", "private"),
        ("192.168.0.10", "private"),
        ("fc00::1", "private"),
        ("169.254.10.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("100.64.3.4", "shared"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),  # IPv4-mapped IPv6
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("64:ff9b::a00:1", "private"),  # NAT64 around 10.0.0.1
        ("169.254.169.254", "metadata"),
        ("fd00:ec2::254", "metadata"),
        ("100.100.100.200", "metadata"),
    ],
)
def test_refused(address: str, why: str) -> None:
    reason = refusal(address)
    assert reason is not None
    assert why in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_is_allowed(address: str) -> None:
    assert refusal(address) is None


def test_allow_private_opens_private_but_not_metadata() -> None:
    assert refusal("10.0.0.1", allow_private=True) is None
    assert refusal("127.0.0.1", allow_private=True) is None
    assert refusal("169.254.169.254", allow_private=True) == "it is a cloud metadata address"
    assert refusal("::ffff:169.254.169.254", allow_private=True) == "it is a cloud metadata address"


def _resolver(table: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError(f"no such host {host}")
        return table[host]

    return resolve


@pytest.mark.parametrize("host", ["2130706433", "0177.0.0.1", "0x7f.1", "127.1", "[::ffff:7f00:1]"])
async def test_numeric_host_forms_are_not_fooling_it(host: str) -> None:
    guard = AddressGuard(resolver=_resolver({}))
    with pytest.raises(AddressNotAllowed, match="loopback"):
        await guard.addresses(host, 80)


async def test_dns_name_resolving_to_private_is_refused_with_the_address() -> None:
    guard = AddressGuard(resolver=_resolver({"intranet.example": ["93.184.216.34", "10.0.0.7"]}))
    with pytest.raises(AddressNotAllowed) as info:
        await guard.addresses("intranet.example", 443)
    assert info.value.address == "10.0.0.7"
    assert "intranet.example -> 10.0.0.7" in str(info.value)
    assert "allow_private" in str(info.value)


async def test_metadata_names_and_allow_by_name() -> None:
    resolver = _resolver(
        {"metadata.google.internal": ["169.254.169.254"], "public.example": ["93.184.216.34"]}
    )
    strict = AddressGuard(allow_private=True, resolver=resolver)
    with pytest.raises(AddressNotAllowed, match="metadata"):
        await strict.addresses("metadata.google.internal", 80)
    with pytest.raises(AddressNotAllowed, match="metadata"):
        await strict.addresses("169.254.169.254", 80)
    opened = AddressGuard(allow_hosts=["metadata.google.internal", "169.254.169.254"], resolver=resolver)
    assert await opened.addresses("metadata.google.internal", 80) == ["169.254.169.254"]
    assert await opened.addresses("169.254.169.254", 80) == ["169.254.169.254"]
    assert await strict.addresses("public.example", 80) == ["93.184.216.34"]


async def test_rebinding_name_is_refused_before_any_connection(server: LocalServer, tmp_path: Path) -> None:
    """A public-looking name that resolves to loopback: refused, and the server sees nothing."""
    server.route("/", Reply(200, "<p>secret</p>"))
    fetcher = Fetcher(load_settings(state_dir=tmp_path), resolver=_resolver({"public.test": ["127.0.0.1"]}))
    try:
        with pytest.raises(AddressNotAllowed, match="loopback"):
            await fetcher.document(f"http://public.test:{server.port}/")
    finally:
        await fetcher.aclose()
    assert server.seen == []
