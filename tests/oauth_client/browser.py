#!/usr/bin/env python3
"""A $BROWSER for tests: GET the authorization URL and follow its redirects, as a browser whose person
approves at once, until the last one reaches `hermes-hub login`'s loopback callback. Standard library only
(webbrowser runs it as a program of its own). With ``$TEST_ACCOUNT`` set, the person signs in as that
account (``account=`` on the authorization URL, which tests/oauth_client/protected.py reads)."""

import os
import sys
import urllib.parse
import urllib.request

url = sys.argv[1]
if os.environ.get("TEST_ACCOUNT"):
    url += "&" + urllib.parse.urlencode({"account": os.environ["TEST_ACCOUNT"]})
with urllib.request.urlopen(url, timeout=30) as page:  # urllib follows 30x redirects itself
    page.read()
