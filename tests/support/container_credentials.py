#!/usr/bin/env python3
"""A container-credentials endpoint for the credential tests (standard library only): what ECS
and EKS Pod Identity serve at AWS_CONTAINER_CREDENTIALS_FULL_URI. GET on any path answers the
documented JSON (AccessKeyId, SecretAccessKey, Token, Expiration six hours ahead); with
--token, only requests whose Authorization header is that token (as the SDKs send
AWS_CONTAINER_AUTHORIZATION_TOKEN).

    container_credentials.py --port PORT --access-key AKID [--host 127.0.0.1] [--token T]
"""
import argparse
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--access-key", required=True)
    p.add_argument("--secret-key", default="container-secret-key")
    p.add_argument("--token")
    a = p.parse_args()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if a.token and self.headers.get("Authorization") != a.token:
                self.send_response(401)
                self.end_headers()
                return
            body = json.dumps({
                "AccessKeyId": a.access_key,
                "SecretAccessKey": a.secret_key,
                "Token": "container-session-token",
                "Expiration": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 6 * 3600)),
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):
            print(fmt % args, flush=True)

    ThreadingHTTPServer((a.host, a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
