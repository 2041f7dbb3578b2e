#!/usr/bin/env python3
"""Mutated requests against a running `magnets serve` on loopback, for SECONDS: bundles and
commands with bytes cut, inserted and flipped, now and then the request head itself. Prints how
many of each status came back. Afterwards the server must still answer and `magnets check` of
the board must be clean (the caller checks; a refused request changes nothing).

    python3 Scripts/server_fuzz.py PORT TOKEN BOARD BUNDLE [SECONDS] [SEED]
"""
import random
import socket
import sys
import time


def main():
    port, token, board, bundle_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 30
    rng = random.Random(int(sys.argv[6]) if len(sys.argv) > 6 else 1)
    bundle = open(bundle_path, "rb").read()
    command = b'{"kind": "move", "magnet": "A", "to": [1, 2], "author": "fuzz"}'
    base = f"/boards/{board}".encode()
    paths = [base + p for p in [b"/ops", b"/commands", b"", b"/history?format=csv&limit=3", b"/show",
                                b"/ops?since=a%3D1", b"/events?token=x"]]

    def mutate(data):
        data = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(max(1, len(data)))
            roll = rng.random()
            if roll < 0.3 and data:
                del data[i:i + rng.randint(1, 20)]
            elif roll < 0.6:
                data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
            elif data:
                data[i] = rng.randrange(256)
        return bytes(data)

    statuses, count, start = {}, 0, time.time()
    while time.time() - start < seconds:
        body = mutate(bundle) if rng.random() < 0.7 else mutate(command)
        method = rng.choice([b"POST", b"GET", b"POST"])
        request = (method + b" " + rng.choice(paths) + b" HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n"
                   + b"Authorization: Bearer " + token.encode() + b"\r\nContent-Length: "
                   + str(len(body)).encode() + b"\r\n\r\n" + body)
        if rng.random() < 0.1:
            request = mutate(request)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(request)
                status = s.recv(64)[9:12].decode(errors="replace") or "closed"
        except OSError as error:
            status = type(error).__name__
        statuses[status] = statuses.get(status, 0) + 1
        count += 1
    print(count, "requests:", ", ".join(f"{k} x{v}" for k, v in sorted(statuses.items())))


if __name__ == "__main__":
    main()
