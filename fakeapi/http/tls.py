"""The certificates of a served cluster: a CA made at start, a serving certificate, a client certificate.

A real cluster's CA signs the API server's serving certificate and the
administrator's client certificate (kubeadm's ``kubernetes-admin``); clients
trust the CA through the kubeconfig's ``certificate-authority-data``. This
module does the same with ``cryptography`` (EC P-256 keys: quick to make),
every time a server starts: nothing is written but the kubeconfig (and, for
:class:`ssl.SSLContext`, files in a private temporary directory that is
removed at once).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any

#: Who the client certificate names (CN) and its groups (O): kubeadm's administrator.
ADMIN_USER = "kubernetes-admin"
ADMIN_GROUPS = ("kubeadm:cluster-admins", "system:authenticated")
#: How long the certificates are valid (a served cluster lives for one session).
VALIDITY = datetime.timedelta(days=365)


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, both PEM."""

    cert_pem: bytes
    key_pem: bytes


def _key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    out: bytes = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption())
    return out


def _name(cn: str, orgs: tuple[str, ...] = ()) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


class ClusterCA:
    """A self-signed CA (``CN=fakeapi-ca``) that issues serving and client certificates."""

    def __init__(self, common_name: str = "fakeapi-ca") -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes

        self._key = _key()
        now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
        name = _name(common_name)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256())
        )

    @property
    def cert_pem(self) -> bytes:
        """The CA certificate, PEM (what ``certificate-authority-data`` and ``kube-root-ca.crt`` carry)."""
        from cryptography.hazmat.primitives import serialization

        out: bytes = self._cert.public_bytes(serialization.Encoding.PEM)
        return out

    def _issue(self, subject: Any, *, server_hosts: tuple[str, ...] = (), client: bool = False) -> KeyPair:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import ExtendedKeyUsageOID

        key = _key()
        now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False,
                                         crl_sign=False, content_commitment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.CLIENT_AUTH] if client else [ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False)
        )
        if server_hosts:
            names: list[x509.GeneralName] = []
            for h in server_hosts:
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(h)))
                except ValueError:
                    names.append(x509.DNSName(h))
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        from cryptography.hazmat.primitives import serialization

        return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))

    def serving_pair(self, hosts: tuple[str, ...]) -> KeyPair:
        """A serving certificate for ``hosts`` (IP addresses and DNS names), as kube-apiserver's ``apiserver.crt``."""
        return self._issue(_name("kube-apiserver"), server_hosts=hosts)

    def client_pair(self, user: str = ADMIN_USER, groups: tuple[str, ...] = ADMIN_GROUPS) -> KeyPair:
        """A client certificate: CN is the user name, O the groups (how kube-apiserver reads x509 users)."""
        return self._issue(_name(user, groups), client=True)

    def server_context(self, hosts: tuple[str, ...]) -> ssl.SSLContext:
        """A TLS server context with a fresh serving certificate for ``hosts``; client certificates
        signed by this CA are asked for (optional: a token works as well)."""
        pair = self.serving_pair(hosts)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        with tempfile.TemporaryDirectory(prefix="fakeapi-tls-") as d:  # (load_cert_chain reads files only)
            cert, key = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
            for path, data in ((cert, pair.cert_pem), (key, pair.key_pem)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            ctx.load_cert_chain(cert, key)
        ctx.load_verify_locations(cadata=self.cert_pem.decode())
        ctx.verify_mode = ssl.CERT_OPTIONAL
        return ctx


def serving_hosts(host: str) -> tuple[str, ...]:
    """The names a serving certificate for a server bound to ``host`` covers (loopback names always)."""
    names = [host] if host not in ("", "0.0.0.0", "::") else []
    for n in ("127.0.0.1", "::1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"):
        if n not in names:
            names.append(n)
    return tuple(names)
