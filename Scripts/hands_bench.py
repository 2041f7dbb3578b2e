#!/usr/bin/env python3
"""Others' hands under load (issue 34): CLIENTS scripted pages on one board of a fresh
`magnets serve`, each dragging at 30 Hz over the live connection (PROTOCOL.md, "Hands and who
is here"), VIEWERS read-only pages that only watch, and one observer page that times every hand
it is shown: hand-to-observer latency p50/p99, how many hands it saw of those sent, and the
server's CPU and RSS over the run.

    hands_bench.py MAGNETS_BINARY [--clients 32] [--viewers 0] [--seconds 10]

The senders and the observer share one clock (this process). The pages other than the
observer drain their sockets without reading them (the server drops the hands they have not
taken: only the latest of each person waits).
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "MagnetsCLITests"))
from live_client import WebSocket  # noqa: E402


def must(binary, *args, cwd):
    run = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"magnets {' '.join(args)} failed: {run.stderr}")
    return run.stdout.strip()


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0


def drain(sock):
    try:
        while sock.recv(1 << 20, socket.MSG_DONTWAIT):
            pass
    except (BlockingIOError, InterruptedError):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--viewers", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=10)
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="magnets-hands-bench-")
    binary = os.path.abspath(options.binary)
    must(binary, "init", "-b", "a.magnets", "--replica", "alice", "--name", "bench", cwd=folder)
    must(binary, "tray", "add", "M", "-b", "a.magnets", cwd=folder)
    must(binary, "pull", "M", "--to", "300,350", "-b", "a.magnets", cwd=folder)
    must(binary, "server", "add", "bench", "--from", "a.magnets", "--dir", "boards", cwd=folder)
    token = must(binary, "server", "token", "bench", "--dir", "boards", cwd=folder)
    viewer_token = must(binary, "server", "token", "bench", "--read-only", "--dir", "boards", cwd=folder)
    server = subprocess.Popen(
        [binary, "serve", "--dir", "boards", "--port", "0"], cwd=folder, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)", server.stdout.readline()).group(1))
        magnet = "alice-3"
        sent = {}
        sent_lock = threading.Lock()
        latencies = []
        stop = threading.Event()

        observer = WebSocket(port, "/boards/bench/live", token)
        observer.send_json({"type": "join", "name": "observer"})
        viewers = []
        for v in range(options.viewers):
            ws = WebSocket(port, "/boards/bench/live", viewer_token)
            ws.send_json({"type": "join", "name": f"v{v}"})
            viewers.append(ws)

        def observe():
            observer.sock.settimeout(0.5)
            while not stop.is_set():
                try:
                    kind, data = observer.receive()
                except socket.timeout:
                    continue
                except Exception:
                    return
                now = time.monotonic()
                if kind != "text" or '"hand' not in data:
                    continue
                m = json.loads(data)
                for hand in m.get("hands", [m]) if m.get("type") in ("hand", "hands") else []:
                    if "x" not in hand:
                        continue
                    with sent_lock:
                        at = sent.pop((hand["name"], int(hand["x"])), None)
                    if at is not None:
                        latencies.append(now - at)

        def drag(i):
            name = f"c{i}"
            ws = WebSocket(port, "/boards/bench/live", token)
            ws.send_json({"type": "join", "name": name})
            ws.sock.setblocking(False)
            seq = 0
            tick = time.monotonic()
            while not stop.is_set():
                seq += 1
                with sent_lock:
                    sent[(name, seq)] = time.monotonic()
                ws.sock.setblocking(True)
                ws.send_json({"type": "hand", "magnet": magnet, "x": seq, "y": 100 + i})
                ws.sock.setblocking(False)
                drain(ws.sock)
                tick += 1 / 30
                time.sleep(max(0, tick - time.monotonic()))
            ws.sock.close()

        def watch():
            for ws in viewers:
                ws.sock.setblocking(False)
            while not stop.is_set():
                for ws in viewers:
                    drain(ws.sock)
                time.sleep(0.02)

        threads = [threading.Thread(target=observe)] + [threading.Thread(target=drag, args=(i,)) for i in
                                                         range(options.clients)]
        if viewers:
            threads.append(threading.Thread(target=watch))
        time.sleep(0.5)
        cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
        for t in threads:
            t.start()
        peak = 0
        while time.monotonic() - t0 < options.seconds:
            time.sleep(0.5)
            peak = max(peak, rss_mib(server.pid))
        stop.set()
        for t in threads:
            t.join()
        cpu = (cpu_seconds(server.pid) - cpu0) / (time.monotonic() - t0)
        total_sent = options.clients * 30 * options.seconds
        latencies.sort()

        def pct(p):
            return latencies[min(len(latencies) - 1, int(len(latencies) * p))] * 1000 if latencies else float("nan")

        print(json.dumps({
            "clients": options.clients, "viewers": options.viewers, "seconds": options.seconds,
            "hands_seen": len(latencies), "hands_sent_about": int(total_sent),
            "p50_ms": round(pct(0.50), 1), "p99_ms": round(pct(0.99), 1), "max_ms": round(pct(1.0), 1),
            "server_cpu": round(cpu, 2), "server_rss_mib": round(peak, 1),
        }))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
