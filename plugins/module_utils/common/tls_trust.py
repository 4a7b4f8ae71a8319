# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""TLS (no Ansible imports): checking ``ca_path`` before any request, and saying why a handshake
failed; when the certificate is for another name, the names it is for, as the connection that failed read
them (tls.check_name)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import ssl
from urllib.parse import urlsplit

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import excerpt

# The label of the input ca_bundle of the AWX credential type (extensions/awx/credential_type_nac.yml), which
# AWX writes to a file whose path it puts in NAC_CA_PATH.
AWX_CA_FIELD = "CA bundle (PEM)"
TLS_NAME_MISMATCH = re.compile(r"(?:Hostname|IP address) mismatch|doesn't match|not valid for", re.IGNORECASE)


def check_ca_path(ca_path):
    """Raise NacConfigError unless ``ca_path`` is a readable directory or a file holding a PEM certificate."""
    if os.path.isdir(ca_path):
        if not os.access(ca_path, os.R_OK | os.X_OK):
            raise NacConfigError("ca_path %s is a directory that cannot be read" % ca_path)
        return
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=ca_path)
    except FileNotFoundError:
        raise NacConfigError(
            "ca_path %s does not exist: give the path of a PEM bundle of the certificate authorities to trust" % ca_path
        ) from None
    except PermissionError:
        raise NacConfigError("ca_path %s cannot be read (permission denied)" % ca_path) from None
    except ssl.SSLError as error:
        if "NO_CERTIFICATE" in str(error).upper():
            raise NacConfigError(
                "ca_path %s holds no PEM certificate (-----BEGIN CERTIFICATE-----): it must be a PEM "
                "bundle of the certificate authorities to trust (convert a DER file to PEM)" % ca_path
            ) from None
        raise NacConfigError(
            "ca_path %s is not a usable PEM bundle (%s): it must hold the PEM certificates of the "
            "authorities to trust" % (ca_path, excerpt(str(error), 80))
        ) from None
    except (OSError, ValueError) as error:
        raise NacConfigError(
            "ca_path %s cannot be read: %s" % (ca_path, getattr(error, "strerror", None) or error)
        ) from None


def tls_failure(exc, display_url, base_url, verify, timeout):
    """Why the TLS exchange with the service failed (``exc``, an errors.ExchangeError of its TLS stage), and what to
    do about it."""
    names = getattr(exc, "names", None)  # read on the connection that failed (tls.check_name)
    if names == []:
        return (
            "TLS verification failed for %s: its certificate has no subjectAltName, and a common name alone names "
            "no host (urllib3 and browsers refuse it too). Reissue the certificate with the service's name in "
            "subjectAltName, or set validate_certs to false" % display_url
        )
    if names is not None or TLS_NAME_MISMATCH.search(str(exc)):
        return (
            "TLS verification failed for %s: its certificate is for another name (%s), not %s. ca_path cannot "
            "fix this: set api_url to an address the certificate names, or set validate_certs to false"
            % (display_url, ", ".join(names) if names else "the names could not be read", urlsplit(base_url).hostname)
        )
    if "certificate" in str(exc).lower():
        return "TLS verification failed for %s: %s. %s, or set validate_certs to false" % (
            display_url,
            tls_reason(exc),
            ca_advice(verify),
        )
    return "TLS handshake with %s failed: %s. Is it an https:// service on that port (or an http:// one)?" % (
        display_url,
        tls_reason(exc),
    )


def ca_advice(verify):
    """How to trust the service's certificate. With NAC_CA_PATH in the environment (the AWX credential type of this
    collection always injects it, empty without a CA bundle), the credential's field is named too."""
    from_environment = os.environ.get("NAC_CA_PATH")
    if from_environment is None:
        return "Trust its certificate with ca_path (a PEM bundle)"
    field = "in AWX, the field '%s' of the NAC credential" % AWX_CA_FIELD
    if from_environment.strip() and verify == os.path.expanduser(from_environment):
        return (
            "The CA bundle %s (ca_path, from NAC_CA_PATH; %s) does not trust it: it must hold the PEM certificate of "
            "the authority that signed the service's certificate" % (verify, field)
        )
    return (
        "Trust its certificate with ca_path or NAC_CA_PATH (%s: paste the PEM certificate of the authority that "
        "signed the service's certificate there)" % field
    )


def tls_reason(exc):
    """The OpenSSL reason inside requests' wrapping, e.g. 'certificate verify failed: self-signed certificate'."""
    found = re.search(r"\[SSL(?:: [A-Z_]+)?\] ([^'\"()]+)", str(exc))
    return found.group(1).strip() if found else excerpt(str(exc), 200)
