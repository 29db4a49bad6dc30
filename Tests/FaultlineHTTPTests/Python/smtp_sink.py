"""A real SMTP server for the e-mail tests (aiosmtpd 1.4.6 from PyPI): every mail it accepts is written to OUT as
<n>.eml, with its envelope in <n>.json. Prints "READY <port>" once it listens; stops on SIGTERM or when stdin closes.

    python3 smtp_sink.py --port PORT --out DIR [--cert FILE --key FILE [--implicit-tls]] [--auth USER:PASSWORD]

With --cert and --key (and no --implicit-tls) it offers STARTTLS and requires it; with --auth it requires AUTH (PLAIN
or LOGIN) after TLS and refuses any other user name or password.
"""
import argparse
import json
import os
import signal
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Sink:
    def __init__(self, out):
        self.out = out
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            n = self.count
        path = os.path.join(self.out, f"{n:04d}")
        with open(path + ".json.tmp", "w") as f:
            json.dump({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                       "tls": session.ssl is not None, "auth": session.authenticated}, f)
        with open(path + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content)
        os.rename(path + ".json.tmp", path + ".json")
        os.rename(path + ".eml.tmp", path + ".eml")
        return "250 OK stored"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--implicit-tls", action="store_true")
    parser.add_argument("--auth")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    options = {}
    if args.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
        if args.implicit_tls:
            options["ssl_context"] = context
        else:
            options["tls_context"] = context
            options["require_starttls"] = True
    if args.auth:
        user, password = args.auth.split(":", 1)

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user \
                and auth_data.password.decode() == password
            return AuthResult(success=ok, handled=False)

        options["authenticator"] = authenticator
        options["auth_required"] = True
        options["auth_require_tls"] = True
    controller = Controller(Sink(args.out), hostname="127.0.0.1", port=args.port, **options)
    controller.start()
    print(f"READY {controller.port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    stop.wait()
    controller.stop()


if __name__ == "__main__":
    main()
