#!/usr/bin/env python3
"""A TCP proxy that a test drives to put faults between faultline and PostgreSQL (issue #38).

    fault-proxy.py --upstream HOST:PORT --ports-file FILE

listens on a free loopback port for clients and on another for control, writes "PROXY_PORT CONTROL_PORT" to FILE
(written whole, then renamed), and forwards every client connection to HOST:PORT. The control port answers plain
HTTP, so a test drives it with the HTTP client it already has:

    POST /forward          forward at once (ends block and latency); connections held while blocked go on
    POST /latency?ms=N     delay every chunk N ms each way, order kept (a slow database or link)
    POST /block            a partition: nothing is read or written on open connections, new ones are accepted and
                           held without an answer (the client's connect succeeds, its startup is never answered)
    POST /drop             every open connection closed at once (RST when data is unread); the mode stays
    GET  /stats            {"mode":..., "open":N, "accepted":N}

Each answer is sent once the change is in effect. Standard library only; runs until killed.
"""

import argparse
import asyncio
import json
import os
import socket


class Proxy:
    def __init__(self, upstream_host, upstream_port):
        self.upstream = (upstream_host, upstream_port)
        self.latency = 0.0
        self.blocked = False
        self.unblocked = asyncio.Event()
        self.unblocked.set()
        self.entries = {}  # id → [client writer, upstream writer or None]
        self.accepted = 0

    def mode(self):
        if self.blocked:
            return "block"
        return f"latency {int(self.latency * 1000)}" if self.latency else "forward"

    async def client(self, reader, writer):
        self.accepted += 1
        entry = [writer, None]
        key = id(entry)
        self.entries[key] = entry
        try:
            await self.unblocked.wait()
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            except OSError:
                return
            entry[1] = up_writer
            await asyncio.gather(self.pipe(reader, up_writer), self.pipe(up_reader, writer))
        finally:
            self.entries.pop(key, None)
            for w in entry:
                if w is not None:
                    w.close()

    async def pipe(self, reader, writer):
        """Copies one direction; each chunk waits for the latency and for the end of a block, in order."""
        try:
            while True:
                await self.unblocked.wait()
                data = await reader.read(65536)
                if not data:
                    break
                if self.latency:
                    await asyncio.sleep(self.latency)
                await self.unblocked.wait()
                writer.write(data)
                await writer.drain()
        except (OSError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except OSError:
                pass

    def drop(self):
        for entry in list(self.entries.values()):
            for w in entry:
                if w is None:
                    continue
                sock = w.get_extra_info("socket")
                if sock is not None:
                    try:
                        # Linger 0: the close is an RST, as a crashed server or a reset link would give.
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    except OSError:
                        pass
                w.transport.abort()

    async def control(self, reader, writer):
        try:
            line = (await reader.readline()).decode("latin-1").split()
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            method, target = (line + ["", ""])[:2]
            path, _, query = target.partition("?")
            params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            status, body = "200 OK", {}
            if method == "POST" and path == "/forward":
                self.latency = 0.0
                self.blocked = False
                self.unblocked.set()
            elif method == "POST" and path == "/latency":
                self.latency = max(0, int(params.get("ms", "0"))) / 1000
                self.blocked = False
                self.unblocked.set()
            elif method == "POST" and path == "/block":
                self.blocked = True
                self.unblocked.clear()
            elif method == "POST" and path == "/drop":
                self.drop()
            elif not (method == "GET" and path == "/stats"):
                status = "404 Not Found"
            body.update(mode=self.mode(), open=len(self.entries), accepted=self.accepted)
            data = json.dumps(body).encode()
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                         f"Connection: close\r\n\r\n".encode() + data)
            await writer.drain()
        finally:
            writer.close()


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="HOST:PORT of the real server")
    parser.add_argument("--ports-file", required=True)
    args = parser.parse_args()
    host, _, port = args.upstream.rpartition(":")
    proxy = Proxy(host, int(port))
    server = await asyncio.start_server(proxy.client, "127.0.0.1", 0)
    control = await asyncio.start_server(proxy.control, "127.0.0.1", 0)
    ports = f"{server.sockets[0].getsockname()[1]} {control.sockets[0].getsockname()[1]}\n"
    with open(args.ports_file + ".tmp", "w", encoding="utf-8") as out:
        out.write(ports)
    os.rename(args.ports_file + ".tmp", args.ports_file)
    await asyncio.gather(server.serve_forever(), control.serve_forever())


if __name__ == "__main__":
    asyncio.run(main())
