#!/usr/bin/env python3
"""Fault-injecting HTTP/1.1 reverse proxy for S3 tests (standard library only).

Every request is forwarded verbatim to the upstream given by --upstream: same
method, request target (path + query) and headers, Host included (AWS SigV4
signs the Host header, so it must reach the server exactly as the client sent
it), and the body bytes as received: a Content-Length body, or a
`Transfer-Encoding: chunked` body forwarded with its chunk framing intact.
The upstream response goes back with its status and headers; its body is
re-sent with a correct Content-Length so client keep-alive keeps working.

Control API, on the same port under /__fault/ (never forwarded):

  POST   /__fault/rules   add a rule (JSON below); answers the rule with its "id"
  GET    /__fault/rules   list the rules still armed
  DELETE /__fault/rules   remove every rule
  GET    /__fault/log     JSON list of flat {"method","path","query","status",
                          "fault","upstream_status","access_key_id","region",
                          "referer"} objects (referer: the request's Referer
                          header, e.g. S3A's audit context, or null;
                          access_key_id: the key id that signed the
                          request, from Authorization's Credential=, or null;
                          region: the region of its SigV4 credential scope,
                          Credential=AKID/DATE/REGION/SERVICE/aws4_request, or
                          of X-Amz-Credential in a presigned query, or null), one per proxied
                          request since the last DELETE (the last 10,000 are
                          kept), logged just before the answer is sent (so a
                          client that has its answer finds its request in the
                          log), in that order. ?path_contains=S keeps those whose raw or
                          percent-decoded path contains S. ?detail=1 adds
                          "headers": the request's headers, names lower-cased,
                          Authorization left out, and "body": the request body
                          as text when it is at most 64 KiB and the method is not
                          PUT (Complete's XML), else null
  DELETE /__fault/log     clear the log

Rule JSON (every "match" key is optional; a rule matches a request when all
keys it gives match):

  {"match": {"method": "PUT",              # exact, case-insensitive
             "query_has": "partNumber",    # query has this parameter name
             "query_lacks": "partNumber",  # query lacks this parameter name
             "part_number": 2,             # partNumber=2 in the query
             "path_contains": "key-sub"},  # in the raw or percent-decoded path
   "action": "status",        # see below
   "status": 500,             # for status / status_after_forward
   "code": "InternalError",   # <Code> of the injected S3 error body
   "message": "injected",     # its <Message>
   "count": 1,                # how many matching requests; < 0: unlimited
   "delay_ms": 0}             # for delay

Actions:
  status                answer `status` + S3 XML error; NOT forwarded
  status_after_forward  forward (the side effect happens), then answer
                        `status` + S3 XML error instead of the real answer
  error_body_200        forward, then answer 200 + an <Error> body (what S3
                        sometimes does for CompleteMultipartUpload)
  drop                  forward, then close the client connection without
                        any response (the answer is lost after the server acted)
  delay                 sleep delay_ms, then forward normally
  truncate              forward, then answer the upstream's status and headers
                        (its full Content-Length) with only the first half of
                        its body, and close the connection: a reset mid-body
  echo_checksum         forward, and when the request carried an
                        x-amz-checksum-<algorithm> header that the upstream's
                        answer lacks, add it to the answer: what S3 does for
                        UploadPart and PutObject (moto echoes it only when the
                        request also names the algorithm in the AWS SDKs'
                        x-amz-sdk-checksum-algorithm); logged with fault
                        "echo_checksum" when added, null when the upstream
                        echoed it itself

Rules are tried in insertion order; the first armed match applies (one rule
per request) and uses up one of its `count`.

Usage: python3 fault_proxy.py --upstream http://127.0.0.1:9000 --port 9100
"""

import argparse
import collections
import html
import http.client
import http.server
import json
import sys
import threading
import time
import urllib.parse

CONTROL_PREFIX = "/__fault/"
ACTIONS = ("status", "status_after_forward", "error_body_200", "drop", "delay", "echo_checksum", "truncate")
MATCH_KEYS = ("method", "query_has", "query_lacks", "part_number", "path_contains")
LOG_LIMIT = 10_000
LOG_BODY_LIMIT = 64 * 1024  # request bodies logged up to this size (not PUT bodies)
# Request headers never logged: the signature (and the access key it names).
UNLOGGED_HEADERS = {"authorization"}


def access_key_id(authorization):
    """The access key id of a SigV4 Authorization header (Credential=AKID/date/...), or None."""
    if not authorization or "Credential=" not in authorization:
        return None
    return authorization.split("Credential=", 1)[1].split("/", 1)[0]


def signing_region(authorization, query):
    """The region of a SigV4 credential scope (AKID/DATE/REGION/SERVICE/aws4_request), from
    the Authorization header or a presigned X-Amz-Credential parameter, or None."""
    scope = None
    if authorization and "Credential=" in authorization:
        scope = authorization.split("Credential=", 1)[1].split(",", 1)[0].strip()
    elif query.get("X-Amz-Credential"):
        scope = query["X-Amz-Credential"][0]
    parts = scope.split("/") if scope else []
    return parts[2] if len(parts) == 5 else None
DETAIL_FIELDS = ("headers", "body")  # in GET /__fault/log only with ?detail=1
UPSTREAM_TIMEOUT_S = 300

# Hop-by-hop response headers: they describe one connection, not the message,
# so they are not copied from the upstream connection to the client one.
# Content-Length is re-computed from the body actually sent.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class FaultState:
    """Rules and request log, shared by all handler threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []  # dicts, in insertion order
        self.next_id = 1
        self.log = collections.deque(maxlen=LOG_LIMIT)

    def add_rule(self, spec):
        rule = validate_rule(spec)
        with self.lock:
            rule["id"] = self.next_id
            self.next_id += 1
            self.rules.append(rule)
            return dict(rule)

    def take_rule(self, method, path, query):
        """Return the first armed rule matching the request, using up one of
        its count, or None."""
        with self.lock:
            for rule in self.rules:
                if rule_matches(rule["match"], method, path, query):
                    if rule["count"] > 0:
                        rule["count"] -= 1
                        if rule["count"] == 0:
                            self.rules.remove(rule)
                    return dict(rule)
        return None


def validate_rule(spec):
    """Check a rule posted to the control API; return it with defaults filled
    in. Raises ValueError with a readable message."""
    if not isinstance(spec, dict):
        raise ValueError("rule must be a JSON object")
    unknown = set(spec) - {"match", "action", "status", "code", "message", "count", "delay_ms"}
    if unknown:
        raise ValueError(f"unknown rule keys: {sorted(unknown)}")
    match = spec.get("match", {})
    if not isinstance(match, dict) or set(match) - set(MATCH_KEYS):
        raise ValueError(f"match must be an object with keys among {MATCH_KEYS}")
    if "part_number" in match and not isinstance(match["part_number"], int):
        raise ValueError("match.part_number must be an integer")
    for key in ("method", "query_has", "query_lacks", "path_contains"):
        if key in match and not isinstance(match[key], str):
            raise ValueError(f"match.{key} must be a string")
    action = spec.get("action")
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {ACTIONS}")
    rule = {
        "match": dict(match),
        "action": action,
        "status": int(spec.get("status", 500)),
        "code": str(spec.get("code", "InternalError")),
        "message": str(spec.get("message", "injected")),
        "count": int(spec.get("count", 1)),
        "delay_ms": int(spec.get("delay_ms", 0)),
    }
    if rule["count"] == 0:
        raise ValueError("count must be positive (or negative for unlimited)")
    if not 100 <= rule["status"] <= 599:
        raise ValueError("status must be an HTTP status code")
    return rule


def rule_matches(match, method, path, query):
    """`query` is the parse_qs dict of the request's query string."""
    if "method" in match and match["method"].upper() != method.upper():
        return False
    if "query_has" in match and match["query_has"] not in query:
        return False
    if "query_lacks" in match and match["query_lacks"] in query:
        return False
    if "part_number" in match:
        values = query.get("partNumber", [])
        if not values or values[0] != str(match["part_number"]):
            return False
    if "path_contains" in match and not path_contains(path, match["path_contains"]):
        return False
    return True


def path_contains(path, needle):
    """True when `needle` is in the raw or the percent-decoded `path`."""
    return needle in path or needle in urllib.parse.unquote(path)


def s3_error_xml(code, message="injected"):
    code, message = html.escape(code), html.escape(message)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        "<RequestId>fault-proxy</RequestId></Error>"
    ).encode()


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # persistent client connections
    server_version = "fault-proxy"

    # Set on the class by main().
    upstream_host = "127.0.0.1"
    upstream_port = 80
    state = FaultState()

    # One method for every verb: BaseHTTPRequestHandler dispatches on do_<VERB>.
    def do_any(self):
        path, _, query_string = self.path.partition("?")
        body = self.read_body()  # always read it, so the connection stays in sync
        if path.startswith(CONTROL_PREFIX):
            self.handle_control(path, body)
        else:
            self.handle_proxy(path, query_string, body)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_any
    do_OPTIONS = do_PATCH = do_any

    # ---- request body ------------------------------------------------------

    def read_body(self):
        """Read the request body and return its raw bytes as received, chunk
        framing included for a chunked body (forwarded as such)."""
        encoding = self.headers.get("Transfer-Encoding", "")
        if "chunked" in encoding.lower():
            return self.read_chunked_raw()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def read_chunked_raw(self):
        raw = bytearray()
        while True:
            size_line = self.rfile.readline(65537)
            if not size_line:
                raise ConnectionError("client closed inside a chunked body")
            raw += size_line
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                break
            raw += self.rfile.read(size + 2)  # chunk data + CRLF
        while True:  # optional trailer fields, then the final empty line
            line = self.rfile.readline(65537)
            if not line:
                raise ConnectionError("client closed inside chunked trailers")
            raw += line
            if line in (b"\r\n", b"\n"):
                return bytes(raw)

    # ---- proxying ----------------------------------------------------------

    def handle_proxy(self, path, query_string, body):
        query = urllib.parse.parse_qs(query_string, keep_blank_values=True)
        rule = self.state.take_rule(self.command, path, query)
        action = rule["action"] if rule else None
        entry = {
            "method": self.command,
            "path": path,
            "query": query_string,
            "status": None,
            "fault": action,
            "upstream_status": None,
            "access_key_id": access_key_id(self.headers.get("Authorization")),
            "region": signing_region(self.headers.get("Authorization"), query),
            "referer": self.headers.get("Referer"),
            "headers": {name.lower(): value for name, value in self.headers.items()
                        if name.lower() not in UNLOGGED_HEADERS},
            "body": (body.decode("utf-8", "replace")
                     if self.command != "PUT" and len(body) <= LOG_BODY_LIMIT else None),
        }
        logged = False

        def log_then(status, send, *args):
            # The entry goes into the log before the client hears the answer, so a
            # client that got its answer finds its request in the log.
            nonlocal logged
            entry["status"] = status
            with self.state.lock:
                self.state.log.append(entry)
            logged = True
            send(*args)

        try:
            if action == "status":
                log_then(rule["status"], self.send_error_xml, rule["status"], rule["code"], rule["message"])
                return
            if action == "delay":
                time.sleep(rule["delay_ms"] / 1000)
            try:
                status, reason, headers, resp_body = self.forward(body)
            except (OSError, http.client.HTTPException) as exc:
                self.log_message("upstream error: %r", exc)
                entry["fault"] = action or "upstream_error"
                log_then(502, self.send_error_xml, 502, "BadGateway")
                return
            entry["upstream_status"] = status
            if action == "drop":
                # The upstream acted; the client never hears about it.
                self.close_connection = True
            elif action == "error_body_200":
                log_then(200, self.send_error_xml, 200, rule["code"], rule["message"])
            elif action == "status_after_forward":
                log_then(rule["status"], self.send_error_xml, rule["status"], rule["code"], rule["message"])
            elif action == "truncate":
                self.close_connection = True
                log_then(status, self.send_upstream_response, status, reason, headers, resp_body, True)
            else:
                if action == "echo_checksum":
                    headers, added = self.echo_checksum(headers)
                    entry["fault"] = "echo_checksum" if added else None
                log_then(status, self.send_upstream_response, status, reason, headers, resp_body)
        finally:
            if not logged:  # dropped, or failed before answering
                with self.state.lock:
                    self.state.log.append(entry)
            self.log_message('"%s" %s %s', self.requestline, entry["status"],
                             entry["fault"] or "-")

    def forward(self, body):
        """Send the request to the upstream on a fresh connection; return
        (status, reason, headers, body) of its response."""
        conn = http.client.HTTPConnection(
            self.upstream_host, self.upstream_port, timeout=UPSTREAM_TIMEOUT_S
        )
        try:
            # skip_host / skip_accept_encoding: send only the client's headers.
            conn.putrequest(self.command, self.path, skip_host=True,
                            skip_accept_encoding=True)
            for name, value in self.headers.items():
                conn.putheader(name, value)
            conn.endheaders()
            if body:
                conn.send(body)
            resp = conn.getresponse()  # skips any interim 100 Continue
            resp_body = resp.read()  # de-chunked if the upstream chunked it
            return resp.status, resp.reason, resp.getheaders(), resp_body
        finally:
            conn.close()

    def echo_checksum(self, headers):
        """The upstream's response headers plus the request's x-amz-checksum-*
        headers it did not echo; (headers, whether any was added)."""
        present = {name.lower() for name, _ in headers}
        added = [(name.lower(), value) for name, value in self.headers.items()
                 if name.lower().startswith("x-amz-checksum-")
                 and name.lower() not in ("x-amz-checksum-type", "x-amz-checksum-algorithm")
                 and name.lower() not in present]
        return list(headers) + added, bool(added)

    def send_upstream_response(self, status, reason, headers, body, truncated=False):
        no_body = self.command == "HEAD" or status in (204, 304) or status < 200
        # send_response_only: no Server/Date of ours, the upstream's go through.
        self.send_response_only(status, reason)
        for name, value in headers:
            lower = name.lower()
            if lower not in HOP_BY_HOP:
                self.send_header(name, value)
            elif lower == "content-length" and no_body and status != 204:
                # HEAD / 304 announce the size of a body they do not carry.
                self.send_header(name, value)
        if not no_body:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not no_body:
            self.wfile.write(body[: len(body) // 2] if truncated else body)
            if truncated:
                self.wfile.flush()

    def send_error_xml(self, status, code, message="injected"):
        body = s3_error_xml(code, message)
        self.send_response_only(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amz-request-id", "fault-proxy")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return status

    # ---- control API -------------------------------------------------------

    def handle_control(self, path, body):
        resource = path[len(CONTROL_PREFIX):].strip("/")
        state = self.state
        if resource == "rules" and self.command == "POST":
            try:
                rule = state.add_rule(json.loads(body or b"null"))
            except (ValueError, TypeError) as exc:  # incl. json.JSONDecodeError
                return self.send_json(400, {"error": str(exc)})
            return self.send_json(200, rule)
        if resource == "rules" and self.command == "GET":
            with state.lock:
                return self.send_json(200, [dict(r) for r in state.rules])
        if resource == "rules" and self.command == "DELETE":
            with state.lock:
                state.rules.clear()
            return self.send_json(200, {"ok": True})
        if resource == "log" and self.command == "GET":
            with state.lock:
                entries = list(state.log)
            params = urllib.parse.parse_qs(self.path.partition("?")[2])
            needle = params.get("path_contains")
            if needle:
                entries = [e for e in entries if path_contains(e["path"], needle[0])]
            if params.get("detail") != ["1"]:
                entries = [{k: v for k, v in e.items() if k not in DETAIL_FIELDS} for e in entries]
            return self.send_json(200, entries)
        if resource == "log" and self.command == "DELETE":
            with state.lock:
                state.log.clear()
            return self.send_json(200, {"ok": True})
        return self.send_json(404, {"error": f"no control endpoint {self.command} {path}"})

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ProxyServer(http.server.ThreadingHTTPServer):
    daemon_threads = True  # one thread per client connection; die with us
    request_queue_size = 128  # many parallel part uploads connect at once
    allow_reuse_address = True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="http://host:port")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)

    upstream = urllib.parse.urlsplit(args.upstream)
    if upstream.scheme != "http" or not upstream.hostname:
        parser.error("--upstream must be an http://host[:port] URL")
    ProxyHandler.upstream_host = upstream.hostname
    ProxyHandler.upstream_port = upstream.port or 80

    server = ProxyServer((args.host, args.port), ProxyHandler)
    print(f"fault proxy on http://{args.host}:{server.server_port} -> {args.upstream}",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
