#!/usr/bin/env python3
"""kill -9 during a move of the cache file (`entitlement-cache relocate`), in real processes.

    scripts/reliability/kill-relocate.py [RUNS] [BIN]     # RUNS default 200

The library's RelocationKillTests stop a move at each of its file calls in process, through a
test VFS. This script kills the real tool with SIGKILL at random instants of a real move, as
an app killed at launch would be, RUNS times:

  - an old file holds alice's snapshot and 20 purchases queued offline (written by
    `simulate`, their posts failing), and 8 other users' snapshots; the new file, which a
    widget created first, holds a newer answer for alice, older answers for 4 of those
    users, and 4 users of its own;
  - `relocate --from OLD --db NEW` starts, and is killed after a random fraction (0 to 130%)
    of the median time a move takes;
  - copies of whatever files the kill left (the file and its log: the crash image) must pass
    `PRAGMA integrity_check`, and between them hold, for every user, the snapshot the move
    keeps (the later requestDate) and every queued purchase;
  - running the move again completes it: exit 0, the old file and its -wal and -shm gone,
    the new file holding exactly the users' winning snapshots and each purchase once.

BIN: the second argument, else $ENTITLEMENT_CACHE_BIN, else the release build of this package
(built when missing). KILL_SEED (env) replays a run's random choices; KEEP_TMP=1 keeps the
temporary directory (kept anyway when a run fails). KILL_RELOCATE_LOSE=1 tries the checker: it
then reads the new file as if the move had lost user o5's snapshot and purchase tx3, and every
run must fail. Exits 1 on any failure.
"""

import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOW = "2026-12-05T12:00:00Z"
SCOPE = ["--sdk-key", "k", "--installation", "i", "--environment", "production"]
OLD_ONLY = [f"o{n}" for n in range(4, 8)]
BOTH = [f"o{n}" for n in range(4)]
NEW_ONLY = [f"n{n}" for n in range(4)]
PURCHASES = [f"tx{n}" for n in range(20)]
# The requestDate each user's snapshot has in the old file, in the new one, and after the move.
OLD_DATE, NEW_OLDER, NEW_NEWER = "2026-11-30T12:00:00Z", "2026-11-29T12:00:00Z", "2026-12-01T12:00:00Z"


def snapshot(request_date, key):
    return json.dumps({
        "requestDate": request_date, "verification": "verified",
        "entitlements": {key: {"status": "active", "expiresAt": "2026-12-30T12:00:00Z"}},
    })


def run(binary, args, stdin=None, cwd=None):
    return subprocess.run([binary] + args, input=stdin, capture_output=True, text=True, cwd=cwd)


def put(binary, db, user, request_date, key):
    result = run(binary, ["put", "--db", db] + SCOPE + ["--user", user, "--now", request_date],
                 stdin=snapshot(request_date, key))
    if result.returncode != 0:
        sys.exit(f"kill-relocate: set-up put failed: {result.stderr}")


def make_templates(binary, folder):
    """The old file (alice, her queued purchases, 8 users) and the widget's new file."""
    old, new = os.path.join(folder, "old.sqlite"), os.path.join(folder, "new.sqlite")
    steps = [{"at": "+0s", "do": "start"}] + [
        {"at": f"+{n + 1}m", "do": "purchase", "transaction": tx, "product": "pro_monthly"}
        for n, tx in enumerate(PURCHASES)]
    script = {
        "start": OLD_DATE, "db": "old.sqlite", "watch": ["pro"],
        "identity": {"sdkKey": "k", "installation": "i", "environment": "production",
                     "user": "alice"},
        "server": {"alice": [{"snapshot": json.loads(snapshot(OLD_DATE, "pro"))}]},
        "steps": steps,
    }
    with open(os.path.join(folder, "old.json"), "w") as handle:
        json.dump(script, handle)
    result = run(binary, ["simulate", "--script", "old.json"], cwd=folder)
    if result.returncode != 0:
        sys.exit(f"kill-relocate: set-up simulate failed: {result.stderr}")
    for user in BOTH + OLD_ONLY:
        put(binary, old, user, OLD_DATE, "pro")
    put(binary, new, "alice", NEW_NEWER, "widget")
    for user in BOTH:
        put(binary, new, user, NEW_OLDER, "stale")
    for user in NEW_ONLY:
        put(binary, new, user, NEW_NEWER, "pro")
    return old, new


def winners():
    """Each user's requestDate once the move is done."""
    expected = {"alice": NEW_NEWER}
    expected.update({user: OLD_DATE for user in BOTH + OLD_ONLY})
    expected.update({user: NEW_NEWER for user in NEW_ONLY})
    return expected


def held(binary, db):
    """The requestDate each user's snapshot has in `db`, and its queued transactions."""
    dates = {}
    for user in winners():
        result = run(binary, ["show", "--db", db] + SCOPE + ["--user", user, "--now", NOW,
                                                             "--json"])
        if result.returncode == 0:
            info = json.loads(result.stdout).get("customerInfo") or {}
            if info.get("requestDate"):
                dates[user] = info["requestDate"]
    result = run(binary, ["queue", "--db", db, "--json"])
    if result.returncode != 0:
        raise AssertionError(f"queue of {os.path.basename(db)}: {result.stderr.strip()}")
    queued = [entry["transactionId"] for entry in json.loads(result.stdout)["purchases"]]
    if os.environ.get("KILL_RELOCATE_LOSE") == "1" and os.path.basename(db) == "new.sqlite":
        dates.pop("o5", None)
        queued = [transaction for transaction in queued if transaction != "tx3"]
    return dates, queued


def integrity(db):
    result = subprocess.run(["sqlite3", db, "PRAGMA integrity_check"], capture_output=True,
                            text=True)
    if result.stdout.strip() != "ok":
        raise AssertionError(f"integrity_check of {os.path.basename(db)}: "
                             f"{result.stdout.strip()} {result.stderr.strip()}")


def crash_image(path, folder):
    """A copy of the file and its log as the kill left them; None when there is no file."""
    if not os.path.exists(path):
        return None
    os.makedirs(folder, exist_ok=True)
    copy = os.path.join(folder, os.path.basename(path))
    for suffix in ["", "-wal"]:
        if os.path.exists(path + suffix):
            shutil.copyfile(path + suffix, copy + suffix)
    return copy


def check_after_kill(binary, old, new, folder):
    images = [crash_image(old, os.path.join(folder, "old")),
              crash_image(new, os.path.join(folder, "new"))]
    dates, queued = {}, []
    for image in images:
        if image is None:
            continue
        integrity(image)
        found, transactions = held(binary, image)
        for user, date in found.items():
            dates.setdefault(user, set()).add(date)
        queued += transactions
    for user, date in winners().items():
        if date not in dates.get(user, set()):
            raise AssertionError(f"{user}'s snapshot of {date} is in neither file "
                                 f"(found {sorted(dates.get(user, []))})")
    missing = set(PURCHASES) - set(queued)
    if missing:
        raise AssertionError(f"queued purchases in neither file: {sorted(missing)}")


def check_completed(binary, old, new):
    result = run(binary, ["relocate", "--from", old, "--db", new, "--now", NOW])
    if result.returncode != 0:
        raise AssertionError(f"the move run again: exit {result.returncode}: {result.stderr}")
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(old + suffix):
            raise AssertionError(f"old{suffix} is still there after the move completed")
    integrity(new)
    dates, queued = held(binary, new)
    if dates != winners():
        raise AssertionError(f"after the move: {dates}, expected {winners()}")
    if sorted(queued) != sorted(PURCHASES):
        raise AssertionError(f"after the move the queue holds {sorted(queued)}")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    binary = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("ENTITLEMENT_CACHE_BIN")
    if not binary:
        subprocess.run(["swift", "build", "-c", "release", "--product", "entitlement-cache"],
                       cwd=ROOT, check=True, stdout=sys.stderr)
        path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout.strip()
        binary = os.path.join(path, "entitlement-cache")
    binary = os.path.abspath(binary)
    if shutil.which("sqlite3") is None:
        sys.exit("kill-relocate: sqlite3 is needed (apt-get install sqlite3)")
    seed = int(os.environ.get("KILL_SEED", random.randrange(2**31)))
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="kill-relocate.")
    templates = os.path.join(work, "templates")
    os.makedirs(templates)
    template_old, template_new = make_templates(binary, templates)

    durations, kills_in_flight, failures = [], 0, 0
    for index in range(runs):
        folder = os.path.join(work, f"run-{index}")
        os.makedirs(folder)
        old, new = os.path.join(folder, "old.sqlite"), os.path.join(folder, "new.sqlite")
        for template, target in [(template_old, old), (template_new, new)]:
            for suffix in ["", "-wal"]:
                if os.path.exists(template + suffix):
                    shutil.copyfile(template + suffix, target + suffix)
        # The first runs time unkilled moves; later ones kill within 0-130% of their median.
        delay = None if index < 5 else rng.uniform(0, 1.3) * statistics.median(durations)
        started = time.monotonic()
        process = subprocess.Popen([binary, "relocate", "--from", old, "--db", new, "--now",
                                    NOW], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if delay is None:
            process.wait()
            durations.append(time.monotonic() - started)
        else:
            time.sleep(delay)
            if process.poll() is None:
                kills_in_flight += 1
            process.send_signal(signal.SIGKILL)
            process.wait()
        try:
            check_after_kill(binary, old, new, os.path.join(folder, "image"))
            check_completed(binary, old, new)
        except AssertionError as error:
            failures += 1
            print(f"kill-relocate: run {index}: {error}", file=sys.stderr)
            continue
        shutil.rmtree(folder)

    print(f"kill-relocate: {runs} moves, {kills_in_flight} killed while running "
          f"(median move {statistics.median(durations) * 1000:.1f} ms), {failures} failures")
    if failures or os.environ.get("KEEP_TMP") == "1":
        print(f"kill-relocate: kept {work} (replay with KILL_SEED={seed})", file=sys.stderr)
    else:
        shutil.rmtree(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
