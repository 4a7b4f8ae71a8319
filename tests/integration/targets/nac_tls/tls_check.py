# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start the emulator over HTTPS with a fresh self-signed certificate, then run tls.yml against it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import ipaddress
import os
import subprocess
import sys
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator  # noqa: E402  pylint: disable=wrong-import-position


def self_signed(directory):
    """A certificate for nac-emulator.test and 127.0.0.1 (not localhost) that is its own authority; returns
    (cert path, key path)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nac-emulator.test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("nac-emulator.test"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as handle:
        handle.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as handle:
        handle.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return cert_path, key_path


def main():
    python, extra = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as directory:
        cert, key = self_signed(directory)
        with Emulator(tls_cert=cert, tls_key=key).start() as emulator:
            return subprocess.call(
                [
                    "ansible-playbook",
                    "-i",
                    "localhost,",
                    "-c",
                    "local",
                    "-e",
                    "ansible_python_interpreter=" + python,
                    "-e",
                    "nac_tls_url=" + emulator.url,
                    "-e",
                    "nac_tls_ca=" + cert,
                    "-e",
                    "nac_tls_key=" + key,
                ]
                + extra
                + ["tls.yml"]
            )


if __name__ == "__main__":
    sys.exit(main())
