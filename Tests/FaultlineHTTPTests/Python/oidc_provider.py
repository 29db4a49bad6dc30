#!/usr/bin/env python3
"""A small OpenID Connect provider on 127.0.0.1 for SingleSignOnEndToEndTests (issue #37).

Signs its tokens with authlib (authlib.jose: RS256 with a 2048-bit RSA key, ES256 with a P-256 key) and checks PKCE
with authlib's S256 function; the HTTP side is the standard library's. It has its own HTML login page, as a real
provider does, so a browser signs in through it.

    python3 oidc_provider.py --client-id ID --client-secret SECRET

prints `listening on PORT` once it accepts connections. The issuer is `http://127.0.0.1:PORT`.

The test steers it with `POST /test/config` (JSON):
  {"redirect_uri": "..."}   the one callback URL the client may use (exact match, as a real provider requires);
  {"mode": "..."}            how the next id_tokens are made: `rs256` (default), `es256`, and the forgeries the relying
                             party must refuse: `tamper` (a signed token whose claims were changed afterwards),
                             `wrong_nonce`, `expired`, `foreign_key` (signed by another issuer's key under our key id),
                             `wrong_audience`.
Authorization codes are single use: a second exchange of one code is `invalid_grant`.
"""
import argparse
import base64
import html
import json
import secrets
import signal
import sys
import threading
import time
import urllib.parse
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

warnings.filterwarnings("ignore")
from authlib.jose import JsonWebKey, jwt  # noqa: E402
from authlib.oauth2.rfc7636 import create_s256_code_challenge  # noqa: E402

USERS = {
    "ada": {"password": "analytical-engine", "email": "ada@example.com", "name": "Ada Lovelace"},
    "bob": {"password": "difference-engine", "email": "bob@example.com", "name": "Bob Babbage"},
    "eve": {"password": "eavesdropper-01", "email": "eve@elsewhere.org", "name": "Eve"},
}


class Provider:
    def __init__(self, client_id, client_secret):
        self.client_id = client_id
        self.client_secret = client_secret
        self.rsa = JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": "rsa-1"})
        self.ec = JsonWebKey.generate_key("EC", "P-256", is_private=True, options={"kid": "ec-1"})
        # Another issuer's key: never published here, used only for the `foreign_key` forgery.
        self.foreign = JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": "rsa-1"})
        self.redirect_uri = None
        self.mode = "rs256"
        self.codes = {}
        self.lock = threading.Lock()
        self.issuer = None

    def jwks(self):
        keys = []
        for key, alg in ((self.rsa, "RS256"), (self.ec, "ES256")):
            public = key.as_dict(is_private=False)
            public.update({"use": "sig", "alg": alg})
            keys.append(public)
        return {"keys": keys}

    def id_token(self, grant):
        now = int(time.time())
        user = USERS[grant["user"]]
        claims = {
            "iss": self.issuer, "sub": "user-" + grant["user"], "aud": self.client_id, "iat": now, "exp": now + 300,
            "nonce": grant["nonce"], "email": user["email"], "email_verified": True, "name": user["name"],
        }
        mode = self.mode
        if mode == "wrong_nonce":
            claims["nonce"] = secrets.token_hex(32)
        elif mode == "expired":
            claims["iat"], claims["exp"] = now - 3600, now - 1800
        elif mode == "wrong_audience":
            claims["aud"] = "another-client"
        if mode == "es256":
            header, key = {"alg": "ES256", "kid": "ec-1"}, self.ec
        elif mode == "foreign_key":
            header, key = {"alg": "RS256", "kid": "rsa-1"}, self.foreign
        else:
            header, key = {"alg": "RS256", "kid": "rsa-1"}, self.rsa
        token = jwt.encode(header, claims, key).decode()
        if mode == "tamper":
            head, _, signature = token.split(".")
            claims["email"] = "bob@example.com"
            payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
            token = ".".join([head, payload, signature])
        return token


class Handler(BaseHTTPRequestHandler):
    provider: Provider = None

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json", headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def json(self, status, value):
        self.send(status, json.dumps(value))

    def form(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode()
        return {k: v[0] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}, raw

    def do_GET(self):
        p = self.provider
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/.well-known/openid-configuration":
            base = p.issuer
            return self.json(200, {
                "issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
                "jwks_uri": base + "/jwks", "response_types_supported": ["code"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256", "ES256"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            })
        if url.path == "/jwks":
            return self.json(200, p.jwks())
        if url.path == "/authorize":
            query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
            return self.login_page(query, None)
        self.json(404, {"error": "not_found"})

    def login_page(self, query, error):
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in query.items())
        problem = f'<p id="problem">{html.escape(error)}</p>' if error else ""
        page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test IdP sign-in</title></head>
<body><h1>Test IdP</h1>{problem}<form method="post" action="/authorize">{hidden}
<label for="username">User</label><input id="username" name="username">
<label for="password">Password</label><input id="password" name="password" type="password">
<button id="submit" type="submit">Sign in</button></form></body></html>"""
        self.send(200 if not error else 401, page, "text/html; charset=utf-8")

    def do_POST(self):
        p = self.provider
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/test/config":
            length = int(self.headers.get("Content-Length") or 0)
            config = json.loads(self.rfile.read(length) or b"{}")
            with p.lock:
                if "redirect_uri" in config:
                    p.redirect_uri = config["redirect_uri"]
                if "mode" in config:
                    p.mode = config["mode"]
            return self.send(204, b"")
        if url.path == "/authorize":
            return self.authorize()
        if url.path == "/token":
            return self.token()
        self.json(404, {"error": "not_found"})

    def authorize(self):
        p = self.provider
        fields, _ = self.form()
        query = {k: v for k, v in fields.items() if k not in ("username", "password")}
        if fields.get("client_id") != p.client_id or fields.get("redirect_uri") != p.redirect_uri:
            return self.json(400, {"error": "invalid_request", "error_description": "unknown client or redirect_uri"})
        if fields.get("response_type") != "code" or fields.get("code_challenge_method") != "S256" \
                or not fields.get("code_challenge") or "openid" not in fields.get("scope", "").split():
            return self.json(400, {"error": "invalid_request"})
        user = USERS.get(fields.get("username", ""))
        if user is None or user["password"] != fields.get("password"):
            return self.login_page(query, "Wrong user or password.")
        code = secrets.token_urlsafe(24)
        with p.lock:
            p.codes[code] = {
                "user": fields["username"], "nonce": fields.get("nonce", ""), "challenge": fields["code_challenge"],
                "redirect_uri": fields["redirect_uri"],
            }
        target = fields["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": fields.get("state", "")})
        self.send(302, b"", "text/plain", [("Location", target)])

    def token(self):
        p = self.provider
        fields, _ = self.form()
        client_id, secret = fields.get("client_id"), fields.get("client_secret")
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            client_id, secret = urllib.parse.unquote(user), urllib.parse.unquote(password)
        if client_id != p.client_id or secret != p.client_secret:
            return self.json(401, {"error": "invalid_client"})
        if fields.get("grant_type") != "authorization_code":
            return self.json(400, {"error": "unsupported_grant_type"})
        with p.lock:
            grant = p.codes.pop(fields.get("code", ""), None)  # single use
        if grant is None or grant["redirect_uri"] != fields.get("redirect_uri"):
            return self.json(400, {"error": "invalid_grant"})
        if create_s256_code_challenge(fields.get("code_verifier", "")) != grant["challenge"]:
            return self.json(400, {"error": "invalid_grant", "error_description": "PKCE verification failed"})
        self.json(200, {
            "access_token": secrets.token_urlsafe(24), "token_type": "Bearer", "expires_in": 300,
            "id_token": p.id_token(grant),
        })


def main():
    # The test process starts this with the signal mask of the thread that spawned it, where SIGTERM is blocked: the
    # test's terminate() then left the provider running after the suite. Take the signals back.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    args = parser.parse_args()
    provider = Provider(args.client_id, args.client_secret)
    Handler.provider = provider
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    provider.issuer = f"http://127.0.0.1:{port}"
    print(f"listening on {port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
