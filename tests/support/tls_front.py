#!/usr/bin/env python3
"""A TLS front for the local S3 server: it terminates TLS with a throw-away private CA and
forwards each connection's bytes, unchanged, to an http:// upstream (moto).

Two kinds of test need it:
- AWS STS reached from the JVM. Neither AWS SDK can be pointed at a local STS for web
  identity by a setting, and Hadoop 3.4's AssumedRoleCredentialProvider always builds
  `https://<fs.s3a.assumed.role.sts.endpoint>` (../shared/reference/credentials.md): a JVM
  started with `-Djdk.net.hosts.file=<dir>/hosts` (sts.amazonaws.com and
  sts.us-east-1.amazonaws.com mapped to this front's address) and
  `-Djavax.net.ssl.trustStore=<dir>/truststore.p12` reaches moto's STS on port 443.
- A private CA trusted by the JVM (on-prem MinIO): S3 over https://127.0.0.2 with the CA
  only in the JVM's truststore.

It writes into --dir at start, before it listens: ca.pem (the CA certificate), server.pem
and server-key.pem (the server's, for the names in HOSTNAMES and the address it listens
on), truststore.p12 (PKCS12, password TRUSTSTORE_PASSWORD, made by the JDK's keytool; left
out when no keytool is found) and hosts (a jdk.net.hosts.file). Run with the Python of
.venv/ (it needs the `cryptography` package, which moto brings).

    tls_front.py --upstream http://127.0.0.1:PORT --dir DIR [--host 127.0.0.2] [--port 443]
"""

import argparse
import asyncio
import datetime
import ipaddress
import os
import shutil
import ssl
import subprocess
import sys
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# The names the server certificate is valid for, besides the address it listens on.
HOSTNAMES = ["sts.amazonaws.com", "sts.us-east-1.amazonaws.com", "localhost"]
TRUSTSTORE_PASSWORD = "s3native-test"
CHUNK = 64 * 1024


def make_certificates(directory, host):
    """A fresh CA and a server certificate signed by it (valid one day, for HOSTNAMES and
    the IP `host`), written to `directory` as PEM; returns (server cert path, key path)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "s3native test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName(n) for n in HOSTNAMES] + [x509.IPAddress(ipaddress.ip_address(host))]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOSTNAMES[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    os.makedirs(directory, exist_ok=True)
    pem = serialization.Encoding.PEM
    write(os.path.join(directory, "ca.pem"), ca.public_bytes(pem))
    cert_path, key_path = os.path.join(directory, "server.pem"), os.path.join(directory, "server-key.pem")
    write(cert_path, cert.public_bytes(pem))
    write(key_path, key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


def write(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def make_truststore(directory):
    """truststore.p12 holding ca.pem as a trusted certificate, by the JDK's keytool (Java
    reads a PKCS12 file as a truststore only when its entries carry Java's trust
    attribute, which keytool writes). Skipped, with a note, when there is no keytool."""
    keytool = shutil.which("keytool") or (
        os.path.join(os.environ["JAVA_HOME"], "bin", "keytool") if os.environ.get("JAVA_HOME") else None)
    if not keytool or not os.access(keytool, os.X_OK):
        print("tls-front: no keytool on PATH or in JAVA_HOME: no truststore.p12", file=sys.stderr)
        return
    path = os.path.join(directory, "truststore.p12")
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([keytool, "-importcert", "-noprompt", "-alias", "s3native-test-ca",
                    "-file", os.path.join(directory, "ca.pem"), "-keystore", path, "-storetype", "PKCS12",
                    "-storepass", TRUSTSTORE_PASSWORD], check=True, stdout=subprocess.DEVNULL)


def make_hosts_file(directory, host):
    """hosts: the format of -Djdk.net.hosts.file, HOSTNAMES at `host`."""
    write(os.path.join(directory, "hosts"), "".join(f"{host} {name}\n" for name in HOSTNAMES).encode())


async def pipe(reader, writer):
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass
    finally:
        try:
            writer.close()
        except (ConnectionError, ssl.SSLError, RuntimeError):
            pass


def handler(upstream_host, upstream_port):
    async def handle(client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection(upstream_host, upstream_port)
        except OSError as e:
            print(f"tls-front: upstream {upstream_host}:{upstream_port}: {e}", file=sys.stderr)
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, up_writer), pipe(up_reader, client_writer))
    return handle


async def serve(host, port, upstream, context):
    u = urllib.parse.urlsplit(upstream)
    server = await asyncio.start_server(handler(u.hostname, u.port), host, port, ssl=context)
    print(f"tls-front: https://{host}:{port} -> {upstream}", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="http://HOST:PORT to forward to")
    ap.add_argument("--dir", required=True, help="where the CA, certificates, truststore and hosts file go")
    ap.add_argument("--host", default="127.0.0.2")
    ap.add_argument("--port", type=int, default=443)
    a = ap.parse_args()
    if not a.upstream.startswith("http://"):
        ap.error("--upstream must be an http:// URL")
    cert, key = make_certificates(a.dir, a.host)
    make_truststore(a.dir)
    make_hosts_file(a.dir, a.host)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    try:
        asyncio.run(serve(a.host, a.port, a.upstream, context))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
