#!/usr/bin/env python3
"""An HTTPS STS front for object_store's web identity (run by .venv/'s Python: the throw-away CA
and certificate come from tls_front.py, which needs the `cryptography` package): object_store sends AssumeRoleWithWebIdentity to its STS endpoint over HTTPS only, with
its parameters in the query string. Unlike tls_front.py (which forwards bytes unchanged, for
the JVM), this front works on HTTP requests, so it can reshape them for moto. Makes a throw-away CA and a certificate for 127.0.0.1
in DIR (ca.pem, server.pem, server-key.pem), listens on 127.0.0.1 (a free port), forwards every request to UPSTREAM with the Host
header set to HOST, and appends each answer's body to DIR/responses.log. moto picks the service
of an unsigned request from its form body (`Action=...`), while object_store sends STS's
parameters in the query string: a POST without a body has its query moved into a form body. Prints one JSON line
{"url": "https://127.0.0.1:PORT", "ca": "DIR/ca.pem", "log": "DIR/responses.log"} once it
listens; runs until killed.

    sts_front.py --upstream http://127.0.0.1:PORT --dir DIR [--host sts.amazonaws.com]
"""
import argparse
import http.client
import json
import os
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tls_front import make_certificates


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--upstream", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--host", default="sts.amazonaws.com")
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    cert, key = make_certificates(a.dir, "127.0.0.1")
    up = urllib.parse.urlsplit(a.upstream)
    log_path = os.path.join(a.dir, "responses.log")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            headers["Host"] = a.host
            path = self.path
            if self.command == "POST" and not body and "?" in path:
                path, query = path.split("?", 1)
                body = query.encode()
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                headers["Content-Length"] = str(len(body))
            conn = http.client.HTTPConnection(up.hostname, up.port, timeout=30)
            conn.request(self.command, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
            with lock, open(log_path, "ab") as f:
                f.write(data + b"\n")
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("content-length", "connection", "transfer-encoding", "server", "date"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = forward

        def log_message(self, fmt, *args):
            sys.stderr.write("sts-front: " + fmt % args + "\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(json.dumps({"url": f"https://127.0.0.1:{server.server_address[1]}", "ca": f"{a.dir}/ca.pem", "log": log_path}),
          flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
