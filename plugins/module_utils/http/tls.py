# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the TLS context and match a certificate's name as urllib3 does, so that the service is trusted as requests
would trust it (no Ansible imports). connection.Connection.secured calls both on every new TLS connection.
"""

import os
import ssl

try:
    from requests.utils import DEFAULT_CA_BUNDLE_PATH
    from urllib3.util.ssl_ import create_urllib3_context

    try:
        from urllib3.util.ssl_match_hostname import CertificateError, match_hostname
    except ImportError:  # urllib3 1.26 before 1.26.8
        from urllib3.packages.ssl_match_hostname import CertificateError, match_hostname
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    create_urllib3_context = None


def check_name(certificate: dict, hostname: str) -> None:
    """Raise ssl.CertificateError unless ``certificate`` (as getpeercert gives it) is for ``hostname``, as urllib3
    matches it (subjectAltName only: a certificate with a common name alone is for no name). The error carries
    the names the certificate is for (``nac_names``)."""
    names = [value for kind, value in certificate.get("subjectAltName", ()) if kind in ("DNS", "IP Address")]
    try:
        if not names:
            raise CertificateError("no appropriate subjectAltName fields were found")
        match_hostname(certificate, hostname)
    except CertificateError as exc:
        error = ssl.SSLCertVerificationError(
            1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: Hostname mismatch, %s" % exc
        )
        error.nac_names = names  # [] for a certificate with a common name alone
        raise error from None


def tls_context(verify) -> ssl.SSLContext:
    """Make the TLS context of ``verify`` as requests reads it, as urllib3 makes it (TLS 1.2 at least): True, the CA
    bundle requests ships (certifi); a path, that bundle (a file) or directory of certificates; False, no verification.
    The certificate's name is matched after the handshake (check_name), on the same connection."""
    context = create_urllib3_context()
    context.check_hostname = False
    if verify is False:
        context.verify_mode = ssl.CERT_NONE
        return context
    context.verify_mode = ssl.CERT_REQUIRED
    where = DEFAULT_CA_BUNDLE_PATH if verify is True else verify
    try:
        context.load_verify_locations(**{"capath" if os.path.isdir(where) else "cafile": where})
    except (OSError, ssl.SSLError, ValueError) as error:
        raise ValueError(
            "The CA bundle %s (ca_path, else REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE) cannot be read: %s" % (where, error)
        ) from None
    return context
