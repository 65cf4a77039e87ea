#!/usr/bin/env python3
"""A $BROWSER for tests: GET the authorization URL and follow its redirects, as a browser whose person
approves at once, until the last one reaches `hermes-hub login`'s loopback callback. Standard library only
(webbrowser runs it as a program of its own)."""

import sys
import urllib.request

with urllib.request.urlopen(sys.argv[1], timeout=30) as page:  # urllib follows 30x redirects itself
    page.read()
