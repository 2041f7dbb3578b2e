#!/usr/bin/env python3
"""Crash loop: start syncs, imports and moves on large board files and SIGKILL them at random
moments until --kills of them were killed mid-run; after each kill every file must open, `magnets check` must be clean, and no op that a
command acknowledged (exit 0) may be missing.

    python3 Scripts/crash_loop.py [--kills 200] [--moves 20000] [--seed 1] [--magnets PATH]

Prints one line per kill and a summary; exits 1 on the first violation.
"""
import argparse, json, os, random, shutil, signal, sqlite3, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--kills", type=int, default=200)
p.add_argument("--moves", type=int, default=10000, help="moves made on each copy before the loop")
p.add_argument("--batch", type=int, default=1000, help="ops in each fresh bundle synced or imported")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--magnets", default=os.path.join(os.path.dirname(__file__), "..", ".build", "release", "magnets"))
args = p.parse_args()
rng = random.Random(args.seed)
M = os.path.abspath(args.magnets)
work = tempfile.mkdtemp(prefix="magnets-crash-loop-")

def run(*a, check=True):
    r = subprocess.run([M, *a], cwd=work, capture_output=True, text=True, env={**os.environ, "MAGNETS_USER": "crash"})
    if check and r.returncode != 0:
        sys.exit(f"setup failed: magnets {' '.join(a)}: {r.stderr.strip()}")
    return r

def ops_in(path):
    """The op ids in a file's log, read with Python's own SQLite (after `magnets check` opened it)."""
    db = sqlite3.connect(f"file:{os.path.join(work, path)}?mode=ro", uri=True)
    try:
        names = dict(db.execute("select id, name from replica"))
        return {f"{names[key & 0xFFFF]}:{seq}" for key, seq in db.execute("select id, seq from op")}
    finally:
        db.close()

def bundle(path, replica, seq0, lamport0, count, magnets, board_id, context):
    """A bundle of moves made by `replica` (the format `magnets ops export` writes)."""
    lines = []
    for k in range(count):
        seq = seq0 + k
        clock = dict(context); clock[replica] = seq
        lines.append(json.dumps({"op": f"{replica}:{seq}", "replica": replica, "seq": seq, "lamport": lamport0 + k,
                                 "clock": clock, "author": replica, "time": 1795000000000 + k, "kind": "magnet.move",
                                 "magnet": rng.choice(magnets), "to": [rng.randrange(1000), rng.randrange(700)]}))
    clock = dict(context); clock[replica] = seq0 + count - 1
    header = json.dumps({"magnets_bundle": 1, "board": board_id, "clock": clock, "since": None, "ops": count})
    with open(os.path.join(work, path), "w") as f:
        f.write("\n".join([header] + lines) + "\n")

# A board with 100 magnets, zones and a boundary; two copies with many concurrent moves.
run("init", "-b", "a.magnets", "--replica", "alice")
run("tray", "add", "ABCD", "--unlimited", "-b", "a.magnets")
run("zone", "add", "slot", "--rect", "400,100,100,100", "--capacity", "3", "-b", "a.magnets")
run("boundary", "add", "shelf", "--from", "0,600", "--to", "1000,580", "-b", "a.magnets")
for i in range(100):
    run("pull", "ABCD"[i % 4], "--to", f"{20 + (i * 97) % 960},{30 + (i * 53) % 540}", "-b", "a.magnets")
run("clone", "a.magnets", "b.magnets", "--replica", "bob")
shown = json.loads(run("show", "--json", "-b", "a.magnets").stdout)
magnets = [m["id"] for m in shown["magnets"]]
board_id, base_clock = shown["board"]["id"], shown["clock"]
lamport = max(json.loads(l)["lamport"] for l in run("history", "--format", "ndjson", "--limit", "1", "-b", "a.magnets").stdout.splitlines())
for name, replica in (("a", "alice"), ("b", "bob")):
    bundle(f"{name}.bundle", replica, base_clock.get(replica, 0) + 1, lamport + 1, args.moves, magnets, board_id,
           {r: n for r, n in base_clock.items() if r != replica})
    run("ops", "import", f"{name}.bundle", "-b", f"{name}.magnets")
acknowledged = {"a.magnets": ops_in("a.magnets"), "b.magnets": ops_in("b.magnets")}
kinds = {"sync": 0, "import": 0, "move": 0}
finished, killed = 0, 0
n = -1
while killed < args.kills:
    n += 1
    kind = rng.choice(["sync", "import", "move"])
    kinds[kind] += 1
    target = rng.choice(["a.magnets", "b.magnets"])
    # Fresh work each time, so that no sync or import is a quick no-op: a new replica's moves,
    # concurrent with the copies' moves, sorting among the first of them (replay from an early
    # checkpoint). Their clock covers the base board, so SPEC §4 gives the first Lamport number
    # exactly 1 + the base's largest: any other is refused.
    fresh = f"w{n}"
    fresh_ops = {f"{fresh}:{k}" for k in range(1, args.batch + 1)}
    bundle(f"{fresh}.bundle", fresh, 1, lamport + 1, args.batch, magnets, board_id, base_clock)
    if kind == "sync":
        # One side learns the fresh ops first (acknowledged), then the sync that is killed carries them over.
        run("ops", "import", f"{fresh}.bundle", "-b", target)
        acknowledged[target] |= fresh_ops
        cmd = ["sync", "a.magnets", "b.magnets"]
    elif kind == "import":
        cmd = ["ops", "import", f"{fresh}.bundle", "-b", target]
    else:
        cmd = ["move", rng.choice(magnets), "--to", f"{rng.randrange(1000)},{rng.randrange(700)}", "--json", "-b", target]
    proc = subprocess.Popen([M, *cmd], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(rng.uniform(0, {"sync": 0.8, "import": 0.6, "move": 0.04}[kind]))
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate()
    if proc.returncode == -9:
        killed += 1
    if proc.returncode == 0:
        finished += 1
        if kind == "sync":
            union = acknowledged["a.magnets"] | acknowledged["b.magnets"]
            acknowledged = {"a.magnets": set(union), "b.magnets": set(union)}
        elif kind == "import":
            acknowledged[target] |= fresh_ops
        else:
            acknowledged[target].add(json.loads(out)["op"])
    elif proc.returncode not in (-9, 1):
        sys.exit(f"kill {n}: magnets {' '.join(cmd)} exited {proc.returncode}: {err.strip()}")
    elif proc.returncode == 1 and "locked" in err:
        sys.exit(f"kill {n}: a lock error reached the user: {err.strip()}")
    for path in ("a.magnets", "b.magnets"):
        check = run("check", "-b", path, check=False)
        if check.returncode != 0:
            sys.exit(f"kill {n} ({kind}): {path} does not check clean: {check.stderr.strip()}")
        missing = acknowledged[path] - ops_in(path)
        if missing:
            sys.exit(f"kill {n} ({kind}): {path} lost acknowledged ops: {sorted(missing)[:5]}")
    os.remove(os.path.join(work, f"{fresh}.bundle"))
    print(f"{n + 1:4d} {kind:6s} {'killed' if proc.returncode == -9 else 'exited ' + str(proc.returncode):9s} "
          f"a={len(acknowledged['a.magnets'])} b={len(acknowledged['b.magnets'])} acknowledged ops all present, check clean", flush=True)

total = len(acknowledged["a.magnets"] | acknowledged["b.magnets"])
print(f"crash loop: {n + 1} runs ({kinds['sync']} syncs, {kinds['import']} imports, {kinds['move']} moves), "
      f"{killed} killed with SIGKILL, {finished} finished; after every one both files checked clean and all "
      f"{total} acknowledged ops were present")
shutil.rmtree(work)
