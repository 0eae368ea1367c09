"""Where a webhook may post, as a production deployment checks it: one canonical spelling of the
address, every address its name gives public, checked when the hook is added and again at every
POST (a hook stored before the rules, or a name that changed, still posts nowhere private). In
development, loopback and private networks too, and still no link-local or other address."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from tabletop.models import DeliveryStatus, Webhook, WebhookDelivery
from tabletop.services.errors import ServiceError
from tabletop.services.sessions import create_session, start_session
from tabletop.services.webhooks import add_webhook
from tabletop.webhooks import address
from tabletop.webhooks.address import AddressRefused, is_loopback_or_private, is_public, parse
from tabletop.webhooks.post import post
from tabletop.webhooks.sender import sender

from .receivers import Receiver

uses_the_store = pytest.mark.django_db(transaction=True)

# Names the fake resolver answers (the machine has no DNS of its own to ask).
NAMES = {
    "hooks.chat.example": ["93.184.216.34"],
    "v6.chat.example": ["2606:4700:4700::1111"],
    "inside.chat.example": ["10.0.0.7"],
    "mixed.chat.example": ["93.184.216.34", "127.0.0.1"],
    "rebind.chat.example": ["93.184.216.34", "::ffff:127.0.0.1"],
    "metadata.chat.example": ["169.254.169.254"],
    "nat64.chat.example": ["64:ff9b::a00:1"],
}


@pytest.fixture
def production(settings, monkeypatch):
    """A production deployment's webhook settings, with a resolver that knows ``NAMES``."""
    settings.DEBUG = False
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WEBHOOK_PRIVATE_ADDRESSES": False,
        "WEBHOOK_RETRY_SECONDS": [0.05],
        "WEBHOOK_SECONDS": 2,
    }
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        name = str(host).rstrip(".")
        if name in NAMES:
            out = []
            for text in NAMES[name]:
                ip = ipaddress.ip_address(text)
                if ip.version == 4:
                    out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (text, port)))
                else:
                    out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (text, port, 0, 0)))
            return out
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def spellings(port: int) -> list[str]:
    """Ways to write an address that reaches this machine or its network (or that a parser
    could read two ways), every one of which must be refused in production."""
    p = port
    return [
        # percent-encoding
        f"http://%31%32%37.0.0.1:{p}/hook",
        f"http://%6c%6f%63%61%6c%68%6f%73%74:{p}/hook",
        f"http://127.0.0.%31:{p}/hook",
        # IPv4 in decimal, octal, hex and short forms
        f"http://2130706433:{p}/hook",
        f"http://0x7f000001:{p}/hook",
        f"HTTP://0X7F000001:{p}/hook",
        f"http://0x7f.0x0.0x0.0x1:{p}/hook",
        f"http://0177.0.0.1:{p}/hook",
        f"http://0177.0000.0000.0001:{p}/hook",
        f"http://017700000001:{p}/hook",
        f"http://127.1:{p}/hook",
        f"http://127.0.1:{p}/hook",
        f"http://127.000.000.001:{p}/hook",
        f"http://0:{p}/hook",
        f"http://1.2.3.4.5:{p}/hook",
        f"http://chat.example.0x10:{p}/hook",
        # IPv4 inside IPv6, and IPv6 not in its short form
        f"http://[::ffff:127.0.0.1]:{p}/hook",
        f"http://[::ffff:7f00:1]:{p}/hook",
        f"http://[::127.0.0.1]:{p}/hook",
        f"http://[0:0:0:0:0:ffff:7f00:1]:{p}/hook",
        f"http://[0:0:0:0:0:0:0:1]:{p}/hook",
        f"http://[::1%25lo]:{p}/hook",
        f"http://::1:{p}/hook",
        # trailing dots, empty labels
        f"http://localhost.:{p}/hook",
        f"http://127.0.0.1.:{p}/hook",
        f"http://hooks.chat.example.:{p}/hook",
        f"http://hooks..chat.example:{p}/hook",
        # user information
        f"http://user@127.0.0.1:{p}/hook",
        f"http://user:secret@127.0.0.1:{p}/hook",
        f"http://hooks.chat.example@127.0.0.1:{p}/hook",
        f"http://127.0.0.1:{p}@hooks.chat.example/hook",
        # IDNA: look-alike letters that fold to an ASCII name
        f"http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54:{p}/hook",
        f"http://loca\u24dbhost:{p}/hook",
        f"http://\u2170ocalhost:{p}/hook",
        f"http://127\u30020\u30020\u30021:{p}/hook",
        "http://hooks.chat.\u0435xample/hook",
        # whitespace, backslashes, control characters, odd separators
        f"http://127.0.0.1 :{p}/hook",
        f"http://127.0.0.1:{p}/ho ok",
        f"http://127.0.0.1\t:{p}/hook",
        f"http://127.0.0.1:{p}/hook\r\nX-Injected: 1",
        f"http:\\\\127.0.0.1:{p}\\hook",
        "http://127.0.0.1\\@hooks.chat.example/hook",
        f"http:/127.0.0.1:{p}/hook",
        f"http:127.0.0.1:{p}/hook",
        f"//127.0.0.1:{p}/hook",
        # ports not written plainly
        f"http://127.0.0.1:0{p}/hook",
        f"http://127.0.0.1:+{p}/hook",
        f"http://127.0.0.1:{p}:{p}/hook",
        "http://127.0.0.1:99999/hook",
        "http://127.0.0.1:/hook",
        # fragments, other schemes, broken escapes
        f"http://127.0.0.1:{p}/hook#x",
        f"ftp://127.0.0.1:{p}/hook",
        f"gopher://127.0.0.1:{p}/_hook",
        "javascript:alert(1)",
        f"http://127.0.0.1:{p}/ho%zzok",
        # plain spellings of addresses that are not public
        f"http://127.0.0.1:{p}/hook",
        f"http://[::1]:{p}/hook",
        f"http://0.0.0.0:{p}/hook",
        f"http://localhost:{p}/hook",
        "http://10.0.0.1/hook",
        "http://172.16.5.4/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/hook",
        "http://198.18.0.1/hook",
        "http://224.0.0.1/hook",
        "http://255.255.255.255/hook",
        "http://192.0.2.10/hook",
        "http://[fe80::1]/hook",
        "http://[fc00::1]/hook",
        "http://[fd12:3456::1]/hook",
        "http://[ff02::1]/hook",
        "http://[::]/hook",
        "http://[64:ff9b::7f00:1]/hook",
        "http://[2002:7f00:1::1]/hook",
        "http://[2002:a00:1::1]/hook",
        "http://[2001:db8::1]/hook",
        "http://[2001::1]/hook",
        # names whose addresses are not (all) public
        "http://inside.chat.example/hook",
        "http://mixed.chat.example/hook",
        "http://rebind.chat.example/hook",
        "http://metadata.chat.example/hook",
        "http://nat64.chat.example/hook",
        "http://nowhere.chat.example/hook",
    ]


@uses_the_store
def test_every_other_spelling_is_refused_when_added(campaign, production, receiver):
    refused = []
    for url in spellings(receiver.port):
        with pytest.raises(ServiceError) as caught:
            add_webhook(campaign=campaign, user=campaign.gm, url=url)
        assert caught.value.field == "url", url
        refused.append(caught.value.message)
    assert len(refused) >= 40 and not Webhook.objects.exists()
    # Never what a name resolved to: that would map the server's network for the GM.
    for message in refused:
        assert "10.0.0.7" not in message and "169.254" not in message.split("http")[0]
    named = [m for u, m in zip(spellings(receiver.port), refused, strict=True) if "inside." in u]
    assert named == ["Url: the address is not a public internet address"]
    assert receiver.posts == []


def test_every_other_spelling_posts_nothing(production, receiver):
    # The guard of every POST, whatever the store holds: the same spellings, posted directly.
    for url in spellings(receiver.port):
        outcome = post(url, body=b"{}", headers={}, seconds=2, private_ok=False)
        assert outcome.status is None and not outcome.delivered, url
        assert "refused" not in outcome.error.lower() and "errno" not in outcome.error.lower()
    assert receiver.posts == []


@uses_the_store
def test_hooks_stored_anyway_post_nothing(campaign, production, receiver):
    # Hooks stored before these rules (or by hand) fail at their first POST, and only a name
    # that was not found (now) is tried again.
    p = receiver.port
    urls = [
        f"http://%31%32%37.0.0.1:{p}/hook",
        f"http://%6c%6f%63%61%6c%68%6f%73%74:{p}/hook",
        f"http://[::ffff:127.0.0.1]:{p}/hook",
        f"http://127.0.0.1:{p}/hook",
        "http://inside.chat.example/hook",
        "http://nowhere.chat.example/hook",
    ]
    Webhook.objects.bulk_create([Webhook(campaign=campaign, url=url) for url in urls])
    start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    assert sender.wait_idle(30)
    deliveries = WebhookDelivery.objects.order_by("webhook_id")
    assert set(deliveries.values_list("status", flat=True)) == {DeliveryStatus.FAILED}
    assert [(d.attempts, d.last_error) for d in deliveries] == [
        (1, "the address's host may not be percent-encoded (%xx)"),
        (1, "the address's host may not be percent-encoded (%xx)"),
        (1, "write an IPv4 address as itself, not inside an IPv6 address"),
        (1, "the address is not a public internet address"),
        (1, "the address is not a public internet address"),
        (2, "could not reach the address: its name was not found"),
    ]
    assert receiver.posts == []


@uses_the_store
def test_canonical_public_addresses_are_kept_in_their_one_spelling(campaign, production):
    for url, stored in (
        ("https://Hooks.Chat.Example/api/x?wait=1", "https://hooks.chat.example/api/x?wait=1"),
        ("  https://v6.chat.example:8443/h  ", "https://v6.chat.example:8443/h"),
        ("https://[2606:4700:4700::1111]/h", "https://[2606:4700:4700::1111]/h"),
        ("HTTPS://1.1.1.1?x=%2F", "https://1.1.1.1/?x=%2F"),
        ("http://93.184.216.34:8080/a%20b", "http://93.184.216.34:8080/a%20b"),
    ):
        hook = add_webhook(campaign=campaign, user=campaign.gm, url=url)
        assert hook.url == stored
    assert Webhook.objects.count() == 5


@pytest.mark.parametrize(
    ("text", "public"),
    [
        ("8.8.8.8", True),
        ("93.184.216.34", True),
        ("2606:4700:4700::1111", True),
        ("64:ff9b::808:808", True),  # NAT64 of a public address
        ("2002:808:808::1", True),  # 6to4 of a public address
        ("::ffff:8.8.8.8", True),
        ("127.0.0.1", False),
        ("127.255.255.254", False),
        ("10.255.0.1", False),
        ("100.127.255.254", False),
        ("172.31.255.255", False),
        ("192.168.0.1", False),
        ("169.254.0.1", False),
        ("0.0.0.0", False),
        ("0.1.2.3", False),
        ("224.0.0.251", False),
        ("239.255.255.250", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("192.0.0.8", False),
        ("198.51.100.1", False),
        ("203.0.113.1", False),
        ("::", False),
        ("::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:169.254.169.254", False),
        ("::7f00:1", False),
        ("64:ff9b::a9fe:a9fe", False),
        ("64:ff9b:1::1", False),
        ("2002:c0a8:101::1", False),
        ("2001:0::1", False),
        ("2001:db8::1", False),
        ("3fff::1", False),
        ("fc00::1", False),
        ("fe80::1", False),
        ("fec0::1", False),
        ("ff0e::1", False),
        ("100::1", False),
        ("4000::1", False),
    ],
)
def test_public_means_the_public_internet(text, public):
    assert is_public(ipaddress.ip_address(text)) is public


def test_a_hook_is_read_one_way_only():
    target = parse("https://hooks.chat.example:8443/api?x=1")
    assert (target.host, target.port, target.path) == ("hooks.chat.example", 8443, "/api?x=1")
    assert target.host_header == "hooks.chat.example:8443"
    assert parse("http://[2606:4700::1]/").host_header == "[2606:4700::1]"
    with pytest.raises(AddressRefused) as caught:
        parse("http://0x7f.1/")
    assert "four plain numbers" in caught.value.reason


@uses_the_store
def test_development_may_post_to_this_machine(campaign, settings, receiver):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": True}
    assert add_webhook(campaign=campaign, user=campaign.gm, url=receiver.url).url == receiver.url
    # ... but never by a spelling that is not the address's own.
    with pytest.raises(ServiceError):
        add_webhook(campaign=campaign, user=campaign.gm, url=f"http://127.1:{receiver.port}/")
    assert address.is_public(ipaddress.ip_address("127.0.0.1")) is False


# Development allows a receiver on this machine or the GM's own network, nothing else that is
# not public: written as an address, or given by a name.
LOOPBACK_AND_PRIVATE = (
    "http://127.0.0.1/hook",
    "http://10.0.0.1/hook",
    "http://172.31.255.254/hook",
    "http://192.168.1.1/hook",
    "http://[::1]/hook",
    "http://[fd12:3456::1]/hook",
    "http://inside.chat.example/hook",
    "http://rebind.chat.example/hook",
)
NEITHER = (
    "http://169.254.169.254/latest/",
    "http://metadata.chat.example/latest/",
    "http://[fe80::1]/hook",
    "http://0.0.0.0/hook",
    "http://[::]/hook",
    "http://100.64.0.1/hook",
    "http://224.0.0.1/hook",
    "http://[ff02::1]/hook",
    "http://240.0.0.1/hook",
    "http://255.255.255.255/hook",
    "http://192.0.2.10/hook",
    "http://nat64.chat.example/hook",
)


@pytest.fixture
def development(production, settings):
    """Development's webhook settings (the resolver of ``production``, which knows ``NAMES``)."""
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": True}


@uses_the_store
def test_development_adds_hooks_on_loopback_and_private_networks_only(campaign, development):
    for url in LOOPBACK_AND_PRIVATE:
        assert add_webhook(campaign=campaign, user=campaign.gm, url=url).url == url
        Webhook.objects.all().delete()
    for url in NEITHER:
        with pytest.raises(ServiceError) as caught:
            add_webhook(campaign=campaign, user=campaign.gm, url=url)
        assert caught.value.field == "url", url
        assert caught.value.message == (
            "Url: the address is not on the public internet, this machine or a private network"
        ), url
    assert not Webhook.objects.exists()


def test_development_posts_to_no_link_local_or_other_special_address(development, receiver):
    # The guard of every POST: an address stored before, or a name that now gives another.
    assert post(receiver.url, body=b"{}", headers={}, seconds=2, private_ok=True).delivered
    for url in NEITHER:
        outcome = post(url, body=b"{}", headers={}, seconds=2, private_ok=True)
        assert outcome.status is None and not outcome.retry, url
        assert outcome.error == (
            "the address is not on the public internet, this machine or a private network"
        ), url
    assert len(receiver.posts) == 1


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.255.255.254", True),
        ("10.255.0.1", True),
        ("172.16.0.1", True),
        ("172.31.255.255", True),
        ("192.168.0.1", True),
        ("::1", True),
        ("fc00::1", True),
        ("fdff:ffff::1", True),
        ("::ffff:192.168.0.1", True),
        ("8.8.8.8", False),  # public: allowed by is_public, not by this
        ("172.32.0.1", False),
        ("169.254.169.254", False),
        ("::ffff:169.254.169.254", False),
        ("fe80::1", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("224.0.0.251", False),
        ("ff02::1", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("fec0::1", False),
        ("64:ff9b::a00:1", False),
    ],
)
def test_loopback_and_private_means_this_machine_and_private_networks(text, allowed):
    assert is_loopback_or_private(ipaddress.ip_address(text)) is allowed
