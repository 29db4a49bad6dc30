"""A small app using the real sentry-sdk (PyPI) against a Faultline DSN; driven by SentrySDKEndToEndTests.

usage: sentry_app.py DSN SCENARIO [--no-brotli]

Scenarios:
  handled   handled errors and a message, with breadcrumbs, tags, user and contexts (release shop@1.0)
  crash     an unhandled exception inside an application session (the process dies through sys.excepthook)
  sessions  RELEASE COUNT STATUS...: COUNT sessions of RELEASE ending in exited, errored (a handled error) or crashed
  requests  RELEASE COUNT STATUS...: COUNT request-mode sessions (as a web framework integration tracks them),
            exited, errored or crashed in turn; the SDK sends them as `sessions` aggregates (per started minute)
  dist      RELEASE DIST: two application sessions of RELEASE (the SDK sends no dist with them), one with a handled
            error and one crashed by an unhandled one; the events carry `dist` DIST
  burst     N: N handled errors as fast as possible (for rate limiting); prints how many the SDK sent
  full N MARKER: N handled errors to a server whose disk is full, each sent (or dropped) before the next; prints
            the SDK's rate-limit state; waits for the file MARKER (space is back), then for the back-off the
            server asked for to end, and sends one more error and its client report of what it dropped
  spike     RELEASE COUNT USERS: COUNT application sessions of RELEASE by USERS users in turn; every third crashes
            with an unhandled error fingerprinted "spike-crash" (the others exit), each flushed before the next;
            prints the SDK's rate-limit state (for quotas: errors back off, sessions keep flowing)
  anr       RELEASE COUNT: COUNT Android-style ANRs of RELEASE by COUNT users: an `ApplicationNotResponding` exception
            with the mechanism Sentry Android's watchdog gives it (`ANR`, handled: false)
  pii       send_default_pii=True, a password in extra data, a card number in a message, a URL password in a
            breadcrumb, and the user's IP address (for server-side scrubbing)
"""
import sys

if "--no-brotli" in sys.argv:
    # Hide the brotli module: sentry-sdk then falls back to gzip by itself.
    sys.modules["brotli"] = None
    sys.argv.remove("--no-brotli")

import sentry_sdk  # noqa: E402

dsn, scenario = sys.argv[1], sys.argv[2]


def init(release, **extra):
    sentry_sdk.init(dsn=dsn, release=release, environment="production", auto_session_tracking=False,
                    default_integrations=True, **extra)


def checkout(items):
    return sum(items) / len(items)


if scenario == "handled":
    init("shop@1.0")
    sentry_sdk.set_user({"id": "user-7", "email": "u7@example.com"})
    sentry_sdk.set_tag("plan", "pro")
    sentry_sdk.set_tag("payment", "<card>")
    sentry_sdk.set_context("order", {"id": 1234, "items": 3})
    sentry_sdk.add_breadcrumb(category="ui.click", message="tapped Pay", level="info")
    sentry_sdk.add_breadcrumb(category="http", message="POST /api/pay", data={"status_code": 500})
    try:
        checkout([])
    except ZeroDivisionError:
        sentry_sdk.capture_exception()
    try:
        try:
            {}["missing"]
        except KeyError as cause:
            raise ValueError("order has no total") from cause
    except ValueError:
        sentry_sdk.capture_exception()
    sentry_sdk.capture_message("payment provider slow", level="warning")
    sentry_sdk.flush(timeout=10)

elif scenario == "crash":
    init("shop@1.0")
    sentry_sdk.set_user({"id": "user-crash"})
    sentry_sdk.get_isolation_scope().start_session()
    sentry_sdk.add_breadcrumb(category="app", message="about to crash")
    checkout([])  # unhandled: sys.excepthook reports it (handled: false) and the session ends crashed

elif scenario in ("sessions", "requests"):
    release, count, statuses = sys.argv[3], int(sys.argv[4]), sys.argv[5:]
    mode = "application" if scenario == "sessions" else "request"
    init(release)
    for i in range(count):
        status = statuses[i % len(statuses)]
        scope = sentry_sdk.get_isolation_scope()
        if mode == "application":
            sentry_sdk.set_user({"id": f"{release}-user-{i}"})
        scope.start_session(session_mode=mode)
        if status in ("errored", "crashed"):
            # A handled error, or an unhandled one as an integration reports it (mechanism handled: false): the
            # SDK itself then marks the session errored or crashed.
            try:
                checkout([])
            except ZeroDivisionError:
                event, hint = sentry_sdk.utils.event_from_exception(
                    sys.exc_info(), client_options=sentry_sdk.get_client().options,
                    mechanism={"type": "test", "handled": status == "errored"})
                sentry_sdk.capture_event(event, hint=hint)
        scope.end_session()
    sentry_sdk.flush(timeout=10)

elif scenario == "dist":
    release, dist = sys.argv[3], sys.argv[4]
    init(release, dist=dist)
    for i, handled in enumerate((True, False)):
        scope = sentry_sdk.get_isolation_scope()
        sentry_sdk.set_user({"id": f"dist-user-{i}"})
        scope.start_session(session_mode="application")
        try:
            checkout([])
        except ZeroDivisionError:
            event, hint = sentry_sdk.utils.event_from_exception(
                sys.exc_info(), client_options=sentry_sdk.get_client().options,
                mechanism={"type": "test", "handled": handled})
            sentry_sdk.capture_event(event, hint=hint)
        scope.end_session()
    sentry_sdk.flush(timeout=10)

elif scenario == "burst":
    count = int(sys.argv[3])
    init("shop@1.0")
    for i in range(count):
        try:
            raise RuntimeError(f"burst {i}")
        except RuntimeError:
            sentry_sdk.capture_exception()
        sentry_sdk.flush(timeout=5)
    client = sentry_sdk.get_client()
    transport = client.transport
    # The transport's rate-limit state after the 429 (category -> deadline): what "backs off" means.
    limits = getattr(transport, "_disabled_until", {})
    print("disabled:" + ",".join(sorted(str(k) for k in limits.keys())))
    sentry_sdk.flush(timeout=5)
elif scenario == "full":
    import os
    import time
    from datetime import datetime, timezone

    count, marker = int(sys.argv[3]), sys.argv[4]
    init("shop@1.0")
    transport = sentry_sdk.get_client().transport
    for i in range(count):
        try:
            raise RuntimeError(f"while full {i}")
        except RuntimeError:
            sentry_sdk.capture_exception()
        # The worker's queue only: sentry_sdk.flush() would also force out the client report, which the SDK itself
        # drops while it is backed off (and with it the record of what it dropped).
        transport._worker.flush(5)
    limits = dict(getattr(transport, "_disabled_until", {}))
    print("disabled:" + ",".join(sorted(str(k) for k in limits.keys())), flush=True)
    deadline = time.time() + 120
    while not os.path.exists(marker) and time.time() < deadline:
        time.sleep(0.1)
    # Honour the back-off the server asked for, then send again.
    now = datetime.now(timezone.utc)
    wait = max([(until - now).total_seconds() for until in limits.values()] + [0])
    time.sleep(wait + 0.2)
    try:
        raise RuntimeError("after space returned")
    except RuntimeError:
        sentry_sdk.capture_exception()
    sentry_sdk.flush(timeout=10)
    print("sent", flush=True)
elif scenario == "spike":
    release, count, users = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    init(release)
    for i in range(count):
        scope = sentry_sdk.get_isolation_scope()
        sentry_sdk.set_user({"id": f"spike-user-{i % users}"})
        scope.start_session(session_mode="application")
        if i % 3 == 0:
            try:
                checkout([])
            except ZeroDivisionError:
                event, hint = sentry_sdk.utils.event_from_exception(
                    sys.exc_info(), client_options=sentry_sdk.get_client().options,
                    mechanism={"type": "test", "handled": False})
                event["fingerprint"] = ["spike-crash"]
                sentry_sdk.capture_event(event, hint=hint)
        scope.end_session()
        sentry_sdk.get_client().transport._worker.flush(5)
    transport = sentry_sdk.get_client().transport
    limits = getattr(transport, "_disabled_until", {})
    print("disabled:" + ",".join(sorted(str(k) for k in limits.keys())), flush=True)
    sentry_sdk.flush(timeout=10)

elif scenario == "anr":
    release, count = sys.argv[3], int(sys.argv[4])
    init(release)

    class ApplicationNotResponding(Exception):
        """The exception type Sentry Android reports an ANR as."""

    def main_thread():
        raise ApplicationNotResponding("Application Not Responding for at least 5000 ms.")

    for i in range(count):
        sentry_sdk.set_user({"id": f"anr-user-{i}"})
        try:
            main_thread()
        except ApplicationNotResponding:
            event, hint = sentry_sdk.utils.event_from_exception(
                sys.exc_info(), client_options=sentry_sdk.get_client().options,
                mechanism={"type": "ANR", "handled": False})
            sentry_sdk.capture_event(event, hint=hint)
    sentry_sdk.flush(timeout=10)

elif scenario == "pii":
    init("shop@1.0", send_default_pii=True)
    sentry_sdk.set_user({"id": "user-9", "username": "alice", "ip_address": "203.0.113.99"})
    sentry_sdk.set_extra("password", "hunter2-extra")
    sentry_sdk.set_extra("order", "A-1001")
    sentry_sdk.add_breadcrumb(category="db", message="connect postgres://shop:pgsecret77@db.internal/shop")
    sentry_sdk.capture_message("charge failed for card 4111 1111 1111 1111", level="error")
    sentry_sdk.flush(timeout=10)

else:
    raise SystemExit(f"unknown scenario {scenario}")
