# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test the one authentication hook (http/auth.py): the header each scheme applies, and that masking hides the
very token the hook sends."""

import base64

from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import hidden_forms, mask
from ansible_collections.netaccess.nac.plugins.module_utils.http.auth import BasicLogin, BearerKey, from_options


def applied(auth):
    headers = [("Accept", "application/json")]
    auth.apply(headers)
    return headers


def test_an_api_key_is_sent_as_a_bearer_token():
    auth = from_options(dict(api_key="k3y", username=None, password=None))
    assert isinstance(auth, BearerKey)
    assert applied(auth) == [("Accept", "application/json"), ("Authorization", "Bearer k3y")]
    assert auth.values == ("k3y",) and auth.basic == ()


def test_a_login_is_sent_as_basic_in_utf8():
    """A password with a character outside latin-1 reaches the service as typed (UTF-8), not as requests'
    HTTPBasicAuth would send it."""
    auth = from_options(dict(api_key=None, username="admin", password="pässwörd€"))
    assert isinstance(auth, BasicLogin)
    token = base64.b64encode("admin:pässwörd€".encode("utf-8")).decode("ascii")
    assert applied(auth)[-1] == ("Authorization", "Basic " + token)


def test_masking_hides_the_token_the_hook_sends():
    """masking computes the Basic token itself (common may not import http): it must be the one auth.py sends."""
    auth = BasicLogin("admin", "s3cr3t-pass")
    header = applied(auth)[-1][1]
    forms = hidden_forms(auth.values, basic=auth.basic)
    assert mask("echoed: %s" % header, forms) == "echoed: Basic ********"
    assert "s3cr3t-pass" not in mask("the password s3cr3t-pass", forms)
