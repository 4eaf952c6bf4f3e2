#!/usr/bin/env python3
"""Several processes opening one cache file that is not set up yet, all at once.

The app and its widget (or a notification extension) on the first launch after install: each
process opens a file that does not exist yet, or exists with 0 bytes, or was left by the
previous version of the app at the previous schema version, and each stores a snapshot. Every
process must wait for the others and succeed (<doc:Storage>, on the switch to WAL): no
`database is locked` reaches a command, and the newest snapshot is the one left.

    first-open.py BIN ROUNDS [PROCESSES ...]      # PROCESSES default: 2 4 8

For each N in PROCESSES and each kind of file (missing, empty, previous schema), ROUNDS
rounds: a new directory, the file made as the kind says, then N `put` commands started
together, process i storing a snapshot whose requestDate is i seconds after 12:00:00 in an
order shuffled each round, and one `check --json` started among them. Each `put` must exit 0
(stored) or 1 saying "discarded" (an older answer than the one already stored); the `check`
0 or 1 with nothing on stderr; and `show --json` afterwards must read the newest snapshot.

Standard library only; the previous schema's file is built from `Migrations/` by Python's
sqlite3 module, as the previous build's migrations left it (WAL mode, no snapshot). SEED
(env) fixes the shuffles. Prints one line per N and kind; exits 1 on any failure.
"""

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCOPE = ["--sdk-key", "sdk_live_123", "--installation", "install-1",
         "--environment", "production", "--user", "user-a"]
NOW = "2026-11-30T12:01:00Z"
KINDS = ("missing", "empty", "previous-schema")


def snapshot(second):
    return json.dumps({
        "requestDate": f"2026-11-30T12:00:{second:02d}Z",
        "verification": "not_requested",
        "entitlements": {"pro": {"status": "active", "expiresAt": "2026-12-30T12:00:00Z",
                                 "verifiedAt": f"2026-11-30T12:00:{second:02d}Z"}},
    })


def migrations():
    names = sorted(n for n in os.listdir(os.path.join(ROOT, "Migrations")) if n.endswith(".sql"))
    return [(int(n[:4]), open(os.path.join(ROOT, "Migrations", n)).read()) for n in names]


def previous_schema_file(path):
    """The file the previous build left: every migration but the last, in WAL mode."""
    steps = migrations()[:-1]
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    for version, sql in steps:
        connection.executescript(f"BEGIN IMMEDIATE;\n{sql}\nPRAGMA user_version = {version};\nCOMMIT;")
    connection.close()
    os.chmod(path, 0o600)
    return steps[-1][0]


def prepare(kind, path):
    if kind == "empty":
        open(path, "wb").close()
        os.chmod(path, 0o600)
    elif kind == "previous-schema":
        previous_schema_file(path)


def start_at_barrier(argv, directory, name, barrier, release, delay):
    """Forks a child that waits until `barrier` (a pipe's read end) reads end of file, then
    runs `argv` with its output in files of `directory`: every child of a round is released
    at the same instant when the parent closes `release`, the write end (which no child
    keeps open), then after `delay` seconds: a few milliseconds of spread, drawn per child,
    land one process's open inside another's more often than a dead heat does."""
    pid = os.fork()
    if pid == 0:
        try:
            os.close(release)
            os.read(barrier, 1)
            time.sleep(delay)
            for target, suffix in ((1, "out"), (2, "err")):
                descriptor = os.open(os.path.join(directory, f"{name}.{suffix}"),
                                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(descriptor, target)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    return pid


def ending(directory, name, pid):
    _, status = os.waitpid(pid, 0)
    texts = []
    for suffix in ("out", "err"):
        with open(os.path.join(directory, f"{name}.{suffix}"), errors="replace") as file:
            texts.append(file.read())
    return os.waitstatus_to_exitcode(status), texts[0], texts[1]


def one_round(binary, directory, processes, kind, rng):
    """Runs one round; returns a list of failures (empty when it held)."""
    db = os.path.join(directory, "cache.sqlite")
    prepare(kind, db)
    seconds = list(range(1, processes + 1))
    rng.shuffle(seconds)
    commands = []
    for second in seconds:
        body = os.path.join(directory, f"snapshot-{second}.json")
        with open(body, "w") as file:
            file.write(snapshot(second))
        commands.append((f"put-{second}",
                         [binary, "put", "--db", db, *SCOPE, "--file", body, "--now", NOW]))
    commands.insert(rng.randrange(processes + 1), ("check", [
        binary, "check", "--db", db, *SCOPE, "--entitlement", "pro", "--json", "--now", NOW]))
    read_end, write_end = os.pipe()
    children = [(name, start_at_barrier(
        argv, directory, name, read_end, write_end, rng.uniform(0, 0.006)))
                for name, argv in commands]
    os.close(read_end)
    os.close(write_end)
    failures = []
    for name, pid in children:
        code, out, err = ending(directory, name, pid)
        if name == "check":
            # Before any put created it, a missing file is rightly "no such database".
            held = (code in (0, 1) and not err) or (
                kind == "missing" and code == 3 and "no such database" in err)
        else:
            held = code == 0 or (code == 1 and "discarded" in out + err)
        if not held:
            failures.append(f"{name} exited {code}: {(err or out).strip()[:200]}")
    shown = subprocess.run(
        [binary, "show", "--db", db, *SCOPE, "--json", "--now", NOW],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    try:
        left = json.loads(shown.stdout)["bookkeeping"]["serverTime"]
    except (ValueError, KeyError, TypeError):
        left = f"no snapshot ({shown.stderr.strip()[:200]})"
    newest = f"2026-11-30T12:00:{processes:02d}Z"
    if left != newest:
        failures.append(f"left {left}, not the newest {newest}")
    return failures


def main(argv):
    if len(argv) < 3 or not argv[2].isdigit():
        print(f"usage: {argv[0]} BIN ROUNDS [PROCESSES ...]", file=sys.stderr)
        return 2
    binary, rounds = os.path.abspath(argv[1]), int(argv[2])
    counts = [int(n) for n in argv[3:]] or [2, 4, 8]
    seed = int(os.environ.get("SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    print(f"first-open: binary {binary}; seed {seed}")
    status = 0
    for processes in counts:
        for kind in KINDS:
            failed_rounds = 0
            for number in range(1, rounds + 1):
                directory = tempfile.mkdtemp(prefix="first-open.")
                failures = one_round(binary, directory, processes, kind, rng)
                if failures:
                    failed_rounds += 1
                    print(f"  round {number}, {processes} processes, {kind} file: kept {directory}")
                    for failure in failures:
                        print(f"    {failure}")
                else:
                    shutil.rmtree(directory)
            print(f"{processes} processes, {kind} file: {rounds} rounds, "
                  f"{failed_rounds} failed")
            status = status or (1 if failed_rounds else 0)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
