#!/usr/bin/env python3
"""Load on a running `magnets serve`: CLIENTS threads, each on its own keep-alive connection,
each sending REQUESTS `/commands` moves of one magnet to one board (loopback only), then the
acknowledged ops per second and the p50/p99 latency. Used to measure the server's durability
setting and its group commit (commit messages carry the figures).

    python3 Scripts/server_load.py PORT TOKEN BOARD MAGNET [CLIENTS] [REQUESTS]
"""
import http.client
import json
import random
import sys
import threading
import time


def main():
    port, token, board, magnet = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    clients = int(sys.argv[5]) if len(sys.argv) > 5 else 32
    requests = int(sys.argv[6]) if len(sys.argv) > 6 else 50
    latencies, failures = [], []
    lock = threading.Lock()

    def client(n):
        rng = random.Random(n)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        for _ in range(requests):
            body = json.dumps({"kind": "move", "magnet": magnet, "author": f"load{n}",
                               "to": [rng.uniform(50, 950), rng.uniform(50, 650)]})
            start = time.perf_counter()
            conn.request("POST", f"/boards/{board}/commands", body, headers)
            reply = conn.getresponse()
            reply.read()
            elapsed = time.perf_counter() - start
            with lock:
                (latencies if reply.status == 200 else failures).append(elapsed)
        conn.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    latencies.sort()
    def pct(p):
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else float("nan")
    print(f"{len(latencies)} ops acknowledged in {wall:.2f} s: {len(latencies) / wall:.0f} ops/s, "
          f"p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, {len(failures)} failed")


if __name__ == "__main__":
    main()
