#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub that the hub tests start on 127.0.0.1 (never the internet).

Usage: hub_server.py CONFIG_DIR
Binds a free port, prints it on stdout (one line) and serves until killed. Only
GET /{owner}/{name}/resolve/{revision}/config.json is a config; the owner picks the behaviour:
  test-org/NAME        CONFIG_DIR/NAME.json (404 EntryNotFound when there is none);
                       revision "missing" -> 404 RevisionNotFound
  gated-org/NAME       401 GatedRepo without a token, 403 GatedRepo with the wrong one,
                       CONFIG_DIR/NAME.json with "Authorization: Bearer hf_test_token"
  private-org/NAME     403 without an error code
  anon-org/NAME        401 RepoNotFound (the Hub's answer for a repo it will not admit exists)
  big-org/length       8 MiB, Content-Length stated
  big-org/stream       8 MiB, no Content-Length (ends when the connection closes)
  slow-org/NAME        sleeps 5 s before answering
  bad-org/NAME         200 with a body that is not JSON
  busy-org/NAME        503
  moved-org/NAME       307 to test-org/NAME (a renamed repo)
  anything else        404 RepoNotFound
GET /_stats answers {"requests": N, "config_requests": N}: how many config requests came in,
so a test can check that an offline import asked nothing.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIG_DIR = sys.argv[1] if len(sys.argv) > 1 else "."
TOKEN = "hf_test_token"
BIG = 8 << 20
lock = threading.Lock()
stats = {"requests": 0, "config_requests": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the tests print what matters
        pass

    def answer(self, status, body=b"", headers=None, length=True):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, code=None):
        headers = {"X-Error-Code": code} if code else {}
        self.answer(status, json.dumps({"error": code or "error"}).encode(), headers)

    def config(self, name):
        path = os.path.join(CONFIG_DIR, name + ".json")
        if not os.path.isfile(path):
            return self.error(404, "EntryNotFound")
        with open(path, "rb") as f:
            self.answer(200, f.read(), {"Content-Type": "application/json"})

    def do_GET(self):
        with lock:
            stats["requests"] += 1
        if self.path == "/_stats":
            return self.answer(200, json.dumps(stats).encode())
        parts = self.path.split("/")
        # ["", owner, name, "resolve", revision, "config.json"]
        if len(parts) != 6 or parts[3] != "resolve" or parts[5] != "config.json":
            return self.error(404, "EntryNotFound")
        with lock:
            stats["config_requests"] += 1
        owner, name, revision = parts[1], parts[2], parts[4]
        auth = self.headers.get("Authorization")
        if owner == "test-org":
            if revision == "missing":
                return self.error(404, "RevisionNotFound")
            return self.config(name)
        if owner == "gated-org":
            if auth is None:
                return self.error(401, "GatedRepo")
            if auth != "Bearer " + TOKEN:
                return self.error(403, "GatedRepo")
            return self.config(name)
        if owner == "private-org":
            return self.error(403)
        if owner == "anon-org":
            return self.error(401, "RepoNotFound")
        if owner == "big-org":
            body = b"{" + b" " * BIG + b"}"
            if name == "length":
                return self.answer(200, body)
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for i in range(0, len(body), 65536):
                    self.wfile.write(body[i:i + 65536])
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped the transfer, as it should
            return
        if owner == "slow-org":
            time.sleep(5)
            return self.config("llama-2-7b")
        if owner == "bad-org":
            return self.answer(200, b"{not json")
        if owner == "busy-org":
            return self.error(503)
        if owner == "moved-org":
            return self.answer(307, b"", {"Location": "/test-org/%s/resolve/%s/config.json" % (name, revision)})
        return self.error(404, "RepoNotFound")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up (the timeout and size tests) is expected


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
