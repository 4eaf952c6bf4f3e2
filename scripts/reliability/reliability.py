#!/usr/bin/env python3
"""Shared engine of scripts/reliability/kill-writes.sh and two-process-soak.sh.

Standard library only. The shell scripts pick the binary and the temporary directory; this
module writes the snapshots, drives `entitlement-cache` and the `sqlite3` shell, and checks.

Subcommands (the .sh scripts call them; run by hand for debugging):

  reliability.py kill-writes  BIN WORKDIR RUNS FRESH_RUNS SEED
  reliability.py soak-writer  BIN DB SNAPDIR SECONDS RESULT_JSON SEED
  reliability.py soak-reader  BIN DB SNAPDIR SECONDS RESULT_JSON SEED
  reliability.py soak-setup   BIN DB SNAPDIR
  reliability.py soak-report  DB WRITER_JSON READER_JSON SECONDS

The oracle. Three snapshot variants of the example snapshot
(Tests/TestSupport/SampleSnapshot.swift) for the same scope, each recognisable from every place
a reader can see it:

  variant  requestDate (scope row   put --now    entitlement rows        marker  access context
           server_time, JSON body)  (stored_at)  (pro.verified_at)       key     expires
  A        2026-11-30T12:00:00Z     12:00:01Z    lifetime, pro (12:00)   lifetime  12:05
  B        2026-11-30T12:10:00Z     12:10:01Z    b_claim_only*, pro      team      12:15
                                                 (12:10), team
  C        2026-11-30T12:20:00Z     12:20:01Z    c_000..c_399,           c_000     12:25
                                                 pro (12:20)

  * a key only an unclaimed purchase lists: a row with a NULL status carrying the claim hint.
  Each variant's purchase is `tx_<variant>`. Reads are evaluated at 12:30 (READ_NOW), where
  every entitlement is granted and every access context has expired (so `show` removes it
  and, in text, says when it expired).

C has 400 entitlements (about 80 KiB), so its write spans many pages and WAL frames. A read
is "whole" when the body's requestDate, its entitlement keys, the bookkeeping (storedAt,
serverTime, size, SHA-256), the entitlement rows (pro's verifiedAt, the marker keys) and, in
`show`'s text, the removed access context all name the same variant. Any mix is a torn or
partial write or read.
"""

import calendar
import hashlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time

# ---------------------------------------------------------------------------------------------
# Snapshots and scopes

SAMPLE = {
    "requestDate": "2026-11-30T12:00:00Z",
    "verification": "verified",
    "entitlements": {
        "pro": {
            "status": "active",
            "expiresAt": "2026-12-30T12:00:00Z",
            "gracePeriodExpiresAt": None,
            "verifiedAt": "2026-11-30T12:00:00Z",
            "productId": "pro_monthly",
            "source": "purchase",
            "willRenew": True,
        },
        "lifetime": {
            "status": "active",
            "expiresAt": None,
            "verifiedAt": "2026-11-30T12:00:00Z",
            "productId": "lifetime",
            "source": "purchase",
        },
    },
    "purchases": [
        {
            "id": "tx_1", "productId": "pro_monthly", "store": "app_store",
            "purchasedAt": "2026-11-01T09:00:00Z", "ownership": "owned",
            "ownershipType": "purchased", "canClaim": False, "conflict": False,
        }
    ],
    "unclaimedPurchases": [
        {"purchaseId": "tx_9", "productId": "pro_yearly", "entitlements": ["pro"],
         "claimHint": "restore_required"}
    ],
    "accessContext": {"token": "SECRET-ACCESS-TOKEN", "expiresAt": "2026-11-30T12:15:00Z"},
    "deviceAccess": {
        "status": "active",
        "reason": None,
        "expiresAt": "2026-12-07T12:00:00Z",
        "nextAllowedAt": None,
        "changeBudget": {"remaining": 1, "limit": 3, "windowDays": 30},
        "devices": [{"id": "d_7f3a", "label": "iPhone", "lastSeenAt": "2026-11-29T08:00:00Z"}],
        "deviceToken": "SECRET-DEVICE-TOKEN",
    },
}

# Every read is evaluated at this instant: after every variant's requestDate and put time, so
# `pro` is granted under each of them (and no clock rollback is suspected).
READ_NOW = "2026-11-30T12:30:00Z"
FAILURE_NOW = "2026-11-30T12:25:00Z"

SCOPES = {
    "S1": ["--sdk-key", "sdk_live_123", "--installation", "install-1",
           "--environment", "production", "--user", "user-a"],
    "S2": ["--sdk-key", "sdk_live_123", "--installation", "install-1",
           "--environment", "sandbox", "--user", "user-b"],
}

DB_COMPANIONS = ("", "-wal", "-shm", "-journal")


def iso_ms(text):
    """Milliseconds since the epoch of a `YYYY-MM-DDTHH:MM:SSZ` instant."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z", text)
    if not m:
        raise ValueError(text)
    y, mo, d, h, mi, s = (int(g) for g in m.groups())
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) * 1000


class Variant:
    def __init__(self, name, minute, extra, claim_only, marker):
        self.name = name
        self.request_date = f"2026-11-30T12:{minute:02d}:00Z"
        self.put_now = f"2026-11-30T12:{minute:02d}:01Z"
        body = json.loads(json.dumps(SAMPLE))
        body["requestDate"] = self.request_date
        pro = body["entitlements"]["pro"]
        pro["verifiedAt"] = self.request_date
        ents = {"pro": pro}
        ents.update(extra(self.request_date))
        body["entitlements"] = ents
        body["unclaimedPurchases"][0]["entitlements"] = ["pro"] + claim_only
        body["purchases"][0]["id"] = f"tx_{name}"
        # Expired at READ_NOW, so every read removes it; `show` (text) names when it expired.
        self.context_expires = f"2026-11-30T12:{minute + 5:02d}:00Z"
        body["accessContext"]["expiresAt"] = self.context_expires
        self.data = json.dumps(body, indent=1).encode()
        self.size = len(self.data)
        self.sha256 = hashlib.sha256(self.data).hexdigest()
        self.keys = sorted(ents)
        self.active = sorted(ents)  # every entitlement is active and unexpired at READ_NOW
        self.rows = sorted(ents) if not claim_only else sorted(list(ents) + claim_only)
        self.claim_only = claim_only
        self.marker = marker
        self.request_ms = iso_ms(self.request_date)
        self.put_ms = iso_ms(self.put_now)
        self.path = None

    def write(self, directory):
        self.path = os.path.join(directory, f"variant-{self.name}.json")
        with open(self.path, "wb") as f:
            f.write(self.data)


def _extra_a(rd):
    return {"lifetime": {"status": "active", "expiresAt": None, "verifiedAt": rd,
                         "productId": "lifetime", "source": "purchase"}}


def _extra_b(rd):
    return {"team": {"status": "active", "expiresAt": "2027-01-30T12:00:00Z", "verifiedAt": rd,
                     "productId": "team_monthly", "source": "purchase", "willRenew": True}}


def _extra_c(rd):
    return {f"c_{i:03d}": {"status": "active", "expiresAt": "2027-06-30T12:00:00Z",
                           "verifiedAt": rd, "productId": f"bundle_{i:03d}",
                           "source": "purchase", "willRenew": i % 2 == 0}
            for i in range(400)}


def make_variants(directory, write=True):
    """The three variants, their files in `directory`: written, or (write=False) checked to
    be byte-identical to what this build of the module would write."""
    variants = [
        Variant("A", 0, _extra_a, [], "lifetime"),
        Variant("B", 10, _extra_b, ["b_claim_only"], "team"),
        Variant("C", 20, _extra_c, [], "c_000"),
    ]
    for v in variants:
        if write:
            v.write(directory)
        else:
            v.path = os.path.join(directory, f"variant-{v.name}.json")
            with open(v.path, "rb") as f:
                if f.read() != v.data:
                    raise SystemExit(f"error: {v.path} is not variant {v.name}")
    return {v.name: v for v in variants}


# ---------------------------------------------------------------------------------------------
# Running the CLI and the sqlite3 shell

BUSY_PATTERN = re.compile(r"locked|busy", re.IGNORECASE)


class Result:
    def __init__(self, argv, rc, out, err, started, seconds):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.started, self.seconds = started, seconds

    def describe(self):
        cmd = " ".join(self.argv[1:4])
        return f"`{cmd} ...` exit {self.rc}, stderr {self.err.strip()[:300]!r}"


def run_cmd(argv, stdin=None, timeout=60):
    started = time.monotonic()
    p = subprocess.run(argv, stdin=stdin, capture_output=True, timeout=timeout)
    return Result(argv, p.returncode, p.stdout.decode(errors="replace"),
                  p.stderr.decode(errors="replace"), started, time.monotonic() - started)


def put_argv(binary, db, scope, variant):
    # --force: the runs put the variants in every order, an older one after a newer one
    # included, and `put` otherwise keeps the newer one (its conditional store). What they
    # check is that a killed or racing put leaves one whole snapshot; the never-backwards rule
    # has tests of its own (Tests/CLITests/Storage/ConditionalPutTests.swift).
    return [binary, "put", "--db", db, *SCOPES[scope], "--file", variant.path,
            "--now", variant.put_now, "--force", "--json"]


def show(binary, db, scope):
    return run_cmd([binary, "show", "--db", db, *SCOPES[scope], "--now", READ_NOW, "--json"])


def check(binary, db, scope, key):
    return run_cmd([binary, "check", "--db", db, *SCOPES[scope], "--entitlement", key,
                "--now", READ_NOW, "--json"])


def sqlite_integrity(db):
    r = run_cmd(["sqlite3", db, "PRAGMA integrity_check"])
    return r.rc == 0 and r.out.strip() == "ok" and not r.err.strip(), r


RAW_QUERY = """
SELECT lower(hex(s.scope_key)) AS scope_key, s.server_time, s.stored_at, s.snapshot_size,
  length(s.snapshot) AS body_length,
  json_extract(s.snapshot, '$.requestDate') AS body_request_date,
  (SELECT group_concat(key, ',') FROM (SELECT j.key FROM json_each(s.snapshot, '$.entitlements') j
     ORDER BY j.key)) AS body_keys,
  (SELECT group_concat(key, ',') FROM (SELECT e.key FROM entitlement e WHERE e.scope_id = s.id
     ORDER BY e.key)) AS row_keys,
  (SELECT count(DISTINCT e.verified_at) FROM entitlement e
     WHERE e.scope_id = s.id AND e.status IS NOT NULL) AS row_verified_distinct,
  (SELECT min(e.verified_at) FROM entitlement e
     WHERE e.scope_id = s.id AND e.status IS NOT NULL) AS row_verified_at,
  (SELECT group_concat(e.key, ',') FROM entitlement e
     WHERE e.scope_id = s.id AND e.status IS NULL) AS claim_only_rows,
  (SELECT count(*) FROM entitlement o WHERE o.scope_id NOT IN (SELECT id FROM scope))
     AS orphan_rows
FROM scope s;
"""


def raw_scopes(db):
    """The scope rows as the sqlite3 shell reads them: {scope_key_hex: row}, or an error."""
    r = run_cmd(["sqlite3", "-json", "-readonly", db, RAW_QUERY])
    if r.rc != 0 or r.err.strip():
        return None, f"sqlite3 raw read failed: exit {r.rc}: {r.err.strip()[:300]}"
    rows = json.loads(r.out) if r.out.strip() else []
    return {row["scope_key"]: row for row in rows}, None


def classify_raw(row, variants):
    """The variant a raw scope row holds, or (None, why) when the row disagrees with itself."""
    if row is None:
        return "none", None
    if row["server_time"] is None and row["body_length"] is None:
        return "none", None
    by_ms = [v for v in variants.values() if v.request_ms == row["server_time"]]
    if len(by_ms) != 1:
        return None, f"server_time {row['server_time']} is no variant's requestDate"
    v = by_ms[0]
    problems = []
    expect = {
        "stored_at": v.put_ms, "snapshot_size": v.size, "body_length": v.size,
        "body_request_date": v.request_date, "body_keys": ",".join(v.keys),
        "row_keys": ",".join(v.rows), "row_verified_distinct": 1,
        "row_verified_at": v.request_ms, "orphan_rows": 0,
        "claim_only_rows": ",".join(v.claim_only) if v.claim_only else None,
    }
    for column, want in expect.items():
        if row[column] != want:
            got = row[column]
            if isinstance(got, str) and len(got) > 80:
                got = got[:80] + "..."
            problems.append(f"{column}={got!r}, variant {v.name} has {want!r}"
                            if not isinstance(want, str) or len(want) < 80 else
                            f"{column}={got!r} is not variant {v.name}'s")
    if problems:
        return None, "raw scope row is torn: " + "; ".join(problems)
    return v.name, None


def classify_show(result, variants):
    """The variant `show --json` printed, or (None, why) when its parts disagree."""
    if result.rc != 0 or result.err.strip():
        return None, "show failed: " + result.describe()
    try:
        doc = json.loads(result.out)
    except ValueError:
        return None, f"show printed no JSON: {result.out[:200]!r}"
    info = doc.get("customerInfo")
    if info is None:
        if doc.get("decisions") not in ({}, None) or doc.get("activeEntitlements"):
            return None, "show: no customerInfo but decisions or active entitlements"
        return "none", None
    rd = info.get("requestDate")
    by_rd = [v for v in variants.values() if v.request_date == rd]
    if len(by_rd) != 1:
        return None, f"show: requestDate {rd!r} is no variant's"
    v = by_rd[0]
    book = doc.get("bookkeeping") or {}
    problems = []
    expect = [
        ("customerInfo.entitlements keys", sorted(info.get("entitlements") or {}), v.keys),
        ("activeEntitlements", sorted(doc.get("activeEntitlements") or []), v.active),
        ("decisions keys", sorted(doc.get("decisions") or {}), v.keys),
        ("bookkeeping.storedAt", book.get("storedAt"), v.put_now),
        ("bookkeeping.serverTime", book.get("serverTime"), v.request_date),
        ("bookkeeping.snapshotSize", book.get("snapshotSize"), v.size),
        ("bookkeeping.snapshotSHA256", book.get("snapshotSHA256"), v.sha256),
        ("customerInfo.entitlements.pro.verifiedAt",
         ((info.get("entitlements") or {}).get("pro") or {}).get("verifiedAt"), v.request_date),
        ("customerInfo.purchases[0].id",
         ((info.get("purchases") or [{}])[0]).get("id"), f"tx_{v.name}"),
    ]
    for what, got, want in expect:
        if got != want:
            if isinstance(got, list) and len(got) > 6:
                got = got[:6] + ["..."]
            problems.append(f"{what} {got!r} is not variant {v.name}'s")
    if problems:
        return None, f"show (requestDate of {v.name}) is not one snapshot: " + "; ".join(problems)
    return v.name, None


def classify_show_text(result, variants):
    """The variant `show` (text) printed, or (None, why) when its lines disagree: the server
    time, stored at, size, the entitlement table and the removed access context's expiry."""
    if result.rc != 0 or result.err.strip():
        return None, "show (text) failed: " + result.describe()
    out = result.out

    def field(label):
        m = re.search(rf"^{re.escape(label)}\s+(\S+)", out, re.MULTILINE)
        return m.group(1) if m else None

    server = field("server time")
    by_rd = [v for v in variants.values() if v.request_date == server]
    if len(by_rd) != 1:
        return None, f"show (text): server time {server!r} is no variant's"
    v = by_rd[0]
    removed = re.search(r"^access context\s+removed: expired (\S+)", out, re.MULTILINE)
    table = out.split("\nENTITLEMENT ", 1)[1].split("\n\n", 1)[0] if "\nENTITLEMENT " in out else ""
    keys = sorted(line.split()[0] for line in table.splitlines()[1:] if line[:1].strip())
    problems = []
    for what, got, want in [
        ("stored at", field("stored at"), v.put_now),
        ("access context removed at", removed.group(1) if removed else None, v.context_expires),
        ("entitlement table", keys, v.keys),
    ]:
        if got != want:
            if isinstance(got, list) and len(got) > 6:
                got = got[:6] + ["..."]
            problems.append(f"{what} {got!r} is not variant {v.name}'s")
    if problems:
        return None, (f"show (text, server time of {v.name}) is not one snapshot: "
                      + "; ".join(problems))
    return v.name, None


def classify_check(result, key, variants):
    """From `check --entitlement KEY --json`: the variant its scope row (storedAt) names, and
    whether the key's entitlement row agrees with it; (None, why) when they disagree."""
    if result.rc not in (0, 1) or result.err.strip():
        return None, f"check {key} failed: " + result.describe()
    try:
        doc = json.loads(result.out)
    except ValueError:
        return None, f"check printed no JSON: {result.out[:200]!r}"
    ev = doc.get("evidence") or {}
    state = doc.get("state")
    if (state == "granted") != (result.rc == 0):
        return None, f"check {key}: state {state!r} with exit {result.rc}"
    stored = ev.get("storedAt")
    if stored is None:
        if state == "offline_unavailable" and doc.get("reason") == "no_snapshot":
            return "none", None
        return None, f"check {key}: no storedAt but {state}/{doc.get('reason')}"
    by_stored = [v for v in variants.values() if v.put_now == stored]
    if len(by_stored) != 1:
        return None, f"check {key}: storedAt {stored!r} is no variant's"
    v = by_stored[0]
    has_key = key in v.keys
    if has_key:
        if state != "granted":
            return None, (f"check {key}: scope row is variant {v.name} (storedAt {stored}), "
                          f"which grants {key}, but the answer is {state}/{doc.get('reason')}")
        if ev.get("verifiedAt") != v.request_date:
            return None, (f"check {key}: scope row is variant {v.name} (storedAt {stored}) but "
                          f"the entitlement row's verifiedAt is {ev.get('verifiedAt')!r} "
                          f"(variant {v.name} has {v.request_date})")
    else:
        if state != "denied" or doc.get("reason") != "not_entitled":
            return None, (f"check {key}: scope row is variant {v.name} (storedAt {stored}), "
                          f"which has no {key}, but the answer is {state}/{doc.get('reason')} "
                          f"(an entitlement row of another variant?)")
    return v.name, None


def healthy(doctor_json):
    """Whether `doctor --json` printed `"healthy": true`."""
    try:
        return json.loads(doctor_json).get("healthy") is True
    except ValueError:
        return False


def moved_aside(directory, base="cache.sqlite"):
    """Files in the database's directory that are not the database or its companions."""
    allowed = {base + s for s in DB_COMPANIONS}
    return sorted(n for n in os.listdir(directory) if n not in allowed)


# ---------------------------------------------------------------------------------------------
# The write-ahead log a killed writer left behind (https://www.sqlite.org/fileformat.html, 4)

def wal_state(path):
    """What the WAL says about where the writer was: 'absent', 'empty' (opened, nothing
    written), 'header' (a new log's header, no frame), 'uncommitted' (valid frames after the
    last commit frame: killed while writing the transaction), 'committed' (the last valid frame
    is a commit frame), 'garbage' (no valid header)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return "absent", 0, 0
    if not data:
        return "empty", 0, 0
    if len(data) < 32:
        return "garbage", 0, 0
    magic, _version, page_size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in (0x377F0682, 0x377F0683):
        return "garbage", 0, 0
    order = ">" if magic & 1 else "<"
    if page_size == 1:
        page_size = 65536

    def checksum(buf, s1, s2):
        words = struct.unpack(f"{order}{len(buf) // 4}I", buf)
        for i in range(0, len(words), 2):
            s1 = (s1 + words[i] + s2) & 0xFFFFFFFF
            s2 = (s2 + words[i + 1] + s1) & 0xFFFFFFFF
        return s1, s2

    s1, s2 = checksum(data[:24], 0, 0)
    if (s1, s2) != (c1, c2):
        return "garbage", 0, 0
    valid = last_commit = 0
    offset = 32
    while offset + 24 + page_size <= len(data):
        _pgno, commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", data[offset:offset + 24])
        if (fs1, fs2) != (salt1, salt2):
            break
        s1, s2 = checksum(data[offset:offset + 8], s1, s2)
        s1, s2 = checksum(data[offset + 24:offset + 24 + page_size], s1, s2)
        if (s1, s2) != (fc1, fc2):
            break
        valid += 1
        if commit:
            last_commit = valid
        offset += 24 + page_size
    if valid == 0:
        return "header", 0, 0
    if last_commit < valid:
        return "uncommitted", valid, last_commit
    return "committed", valid, last_commit


# ---------------------------------------------------------------------------------------------
# kill-writes

def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def kill_put(binary, db, scope, variant, delay):
    """Starts `put`, sleeps `delay` seconds, SIGKILLs it. Returns (killed, rc, stderr)."""
    with open(variant.path, "rb") as stdin_file, open(os.devnull, "wb") as null:
        argv = put_argv(binary, db, scope, variant)
        p = subprocess.Popen(argv, stdin=stdin_file, stdout=null, stderr=subprocess.PIPE)
        time.sleep(delay)
        # Popen.send_signal reaps first and sends nothing to a process that already exited;
        # one that exits in between is a zombie, which the signal cannot touch: either way
        # the wait status says whether the kill landed.
        p.send_signal(signal.SIGKILL)
        _, err = p.communicate()
    killed = p.returncode == -signal.SIGKILL
    return killed, p.returncode, err.decode(errors="replace")


class KillWrites:
    def __init__(self, binary, work, runs, fresh_runs, seed):
        self.binary, self.work, self.runs, self.fresh_runs = binary, work, runs, fresh_runs
        self.rng = random.Random(seed)
        self.seed = seed
        self.snapdir = os.path.join(work, "snapshots")
        self.dbdir = os.path.join(work, "db")
        os.makedirs(self.snapdir)
        os.makedirs(self.dbdir)
        self.db = os.path.join(self.dbdir, "cache.sqlite")
        self.variants = make_variants(self.snapdir)
        self.failures = []
        self.failed_runs = set()
        self.keys = {}
        self.c = {k: 0 for k in (
            "killed", "exited", "changed", "kept", "changed_killed", "kept_killed",
            "put_after_kill", "recovery_put", "integrity_ok", "cli_reads", "raw_reads",
            "sqlite_first", "log_not_clean")}
        self.phase = {}
        self.phase_outcome = {}
        self.by_delay = {}

    def fail(self, run, message, save=True):
        self.failures.append(f"run {run}: {message}")
        self.failed_runs.add(run)
        print(f"FAIL run {run}: {message}", file=sys.stderr, flush=True)
        if save and len(self.failures) <= 5:
            target = os.path.join(self.work, f"failure-run-{run}")
            if not os.path.exists(target):
                shutil.copytree(self.dbdir, target)
                print(f"  the database as it was: {target}", file=sys.stderr, flush=True)

    def clean_put(self, scope, variant, run, what="put"):
        r = run_with_stdin(put_argv(self.binary, self.db, scope, variant))
        if r.rc == 0:
            samples = self.recent[variant.name]
            samples.append(r.seconds)
            del samples[:-15]
        if r.rc != 0 or r.err.strip():
            self.fail(run, f"{what} of {variant.name} to {scope} after a kill failed: "
                      + r.describe())
            return False
        try:
            self.keys[scope] = json.loads(r.out)["scope"]["hash"]
        except (ValueError, KeyError):
            self.fail(run, f"{what}: no scope hash in put --json output {r.out[:200]!r}")
            return False
        return True

    def measure(self, scope, variant, count):
        times = []
        for _ in range(count):
            r = run_with_stdin(put_argv(self.binary, self.db, scope, variant))
            if r.rc != 0:
                raise SystemExit(f"error: a put failed before any kill: {r.describe()}")
            self.keys[scope] = json.loads(r.out)["scope"]["hash"]
            times.append(r.seconds)
        return times

    def observe(self, run, scope, expect_any, target=None, full=True):
        """Reads `scope` through the CLI (show, check pro, check the target's marker) and
        returns the variant it holds, or None after recording a failure."""
        seen = []
        if full:
            s, why = classify_show(show(self.binary, self.db, scope), self.variants)
            self.c["cli_reads"] += 1
            if why:
                self.fail(run, f"{scope}: {why}")
                return None
            seen.append(("show", s))
        c, why = classify_check(check(self.binary, self.db, scope, "pro"), "pro", self.variants)
        self.c["cli_reads"] += 1
        if why:
            self.fail(run, f"{scope}: {why}")
            return None
        seen.append(("check pro", c))
        if target is not None:
            marker = self.variants[target].marker
            m, why = classify_check(check(self.binary, self.db, scope, marker), marker,
                                    self.variants)
            self.c["cli_reads"] += 1
            if why:
                self.fail(run, f"{scope}: {why}")
                return None
            seen.append((f"check {marker}", m))
        names = {name for _, name in seen}
        if len(names) != 1:
            self.fail(run, f"{scope}: reads disagree: {seen}")
            return None
        (name,) = names
        if name not in expect_any:
            self.fail(run, f"{scope}: holds {name}, expected one of {sorted(expect_any)}")
            return None
        return name

    def raw_check(self, run, expected):
        rows, why = raw_scopes(self.db)
        self.c["raw_reads"] += 1
        if why:
            self.fail(run, why)
            return None
        found = {}
        for scope, allowed in expected.items():
            key = self.keys.get(scope)
            name, why = classify_raw(rows.get(key) if key else None, self.variants)
            if why:
                self.fail(run, f"{scope}: {why}")
                return None
            if name not in allowed:
                self.fail(run, f"{scope}: raw row holds {name}, expected one of {sorted(allowed)}")
                return None
            found[scope] = name
        extra = set(rows) - {self.keys.get(s) for s in SCOPES}
        if extra:
            self.fail(run, f"unexpected scope rows {sorted(extra)}")
        return found

    def integrity(self, run):
        ok, r = sqlite_integrity(self.db)
        if ok:
            self.c["integrity_ok"] += 1
        else:
            self.fail(run, f"integrity_check: exit {r.rc}: {(r.out + r.err).strip()[:300]}")

    def main(self):
        started = time.monotonic()
        v = self.variants
        print(f"kill-writes: binary {self.binary}", flush=True)
        print(f"  database {self.db}; variants A ({v['A'].size} B, {len(v['A'].rows)} rows), "
              f"B ({v['B'].size} B, {len(v['B'].rows)} rows), "
              f"C ({v['C'].size} B, {len(v['C'].rows)} rows); seed {self.seed}", flush=True)
        # How long an unkilled put takes, per variant, on this machine, now.
        timing = {}
        for name in "ABC":
            timing[name] = self.measure("S1", v[name], 8)
        self.measure("S1", v["A"], 1)
        durations = {n: statistics.median(t) for n, t in timing.items()}
        self.recent = {n: list(t) for n, t in timing.items()}
        every = [t for ts in timing.values() for t in ts]
        print("  unkilled put: " + ", ".join(
            f"{n} median {durations[n] * 1000:.1f} ms" for n in "ABC")
            + f"; all p90 {percentile(every, 0.9) * 1000:.1f} ms, max {max(every) * 1000:.1f} ms",
            flush=True)
        inode = os.stat(self.db).st_ino
        # S2 starts with nothing stored: its first kills may leave it empty. `show` names its
        # hash all the same, which the raw reads look rows up by.
        state = {"S1": "A", "S2": "none"}
        for s in SCOPES:
            r = show(self.binary, self.db, s)
            self.keys[s] = json.loads(r.out)["scope"]["hash"]
        for run in range(1, self.runs + 1):
            scope = "S1" if self.rng.random() < 0.75 else "S2"
            other = "S2" if scope == "S1" else "S1"
            before = state[scope]
            target = self.rng.choice([n for n in "ABC" if n != before])
            tv = v[target]
            # Spread over the put's whole life: start-up, open, the write transaction, the
            # checkpoint at close, exit, and after it. Half the kills uniform over 0-130% of
            # the median put; half over 40-110%, where the file is open (start-up, before
            # it, takes about half of a put).
            if self.rng.random() < 0.5:
                fraction = self.rng.uniform(0, 1.3)
            else:
                fraction = self.rng.uniform(0.4, 1.1)
            # The median of this variant's latest unkilled puts: the machine's speed drifts
            # (another build, the disk's sync latency), and the spread follows it.
            recent = statistics.median(self.recent[target])
            delay = recent * fraction
            # The log's oracle below needs a log with no committed frame before this put.
            log_before, _, _ = wal_state(self.db + "-wal")
            log_clean = log_before in ("absent", "empty", "header")
            if not log_clean:
                self.c["log_not_clean"] += 1
            killed, rc, err = kill_put(self.binary, self.db, scope, tv, delay)
            # Before anything reads the file: where the writer was, from its log.
            phase, frames, _ = wal_state(self.db + "-wal")
            if killed:
                self.c["killed"] += 1
            else:
                self.c["exited"] += 1
                if rc != 0 or err.strip():
                    self.fail(run, f"unkilled put of {target} to {scope} exited {rc}: "
                              f"{err.strip()[:300]!r}")
            allowed = {scope: {before, target}, other: {state[other]}}
            if not killed:
                allowed[scope] = {target}
            # The next put, at once, on the other scope: SQLite must recover the killed
            # writer's log and locks for it (30% of runs); otherwise the checks go first.
            put_first = self.rng.random() < 0.3
            if put_first:
                u = self.rng.choice("ABC")
                self.c["put_after_kill"] += 1
                if self.clean_put(other, v[u], run, "put right after the kill"):
                    allowed[other] = {u}
            sqlite_first = self.rng.random() < 0.5
            if sqlite_first:
                self.c["sqlite_first"] += 1
                self.integrity(run)
                raw = self.raw_check(run, allowed)
            held = self.observe(run, scope, allowed[scope], target=target)
            # The other scope: the raw read every run (above or below), the CLI's point read
            # every 2nd run, the whole show every 4th.
            other_held = (self.observe(run, other, allowed[other], full=(run % 4 == 0))
                          if run % 2 == 0 else next(iter(allowed[other])))
            if not sqlite_first:
                raw = self.raw_check(run, allowed)
                self.integrity(run)
            if raw is not None and held is not None and raw.get(scope) != held:
                self.fail(run, f"{scope}: the CLI reads {held}, the raw rows {raw.get(scope)}")
            stray = moved_aside(self.dbdir)
            if stray:
                self.fail(run, f"files beside the database: {stray}", save=False)
            try:
                if os.stat(self.db).st_ino != inode:
                    self.fail(run, "the database file was replaced (new inode)", save=False)
                    inode = os.stat(self.db).st_ino
            except FileNotFoundError:
                self.fail(run, "the database file is gone", save=False)
                break
            outcome = None
            if held is not None:
                outcome = "changed" if held == target and target != before else "kept"
                self.c[outcome] += 1
                if killed:
                    self.c[outcome + "_killed"] += 1
                state[scope] = held
                # The log is the second witness: a commit frame in it (the log was empty
                # before this put) means the transaction committed; frames without one
                # mean it did not.
                if killed and log_clean and phase == "committed" and outcome != "changed":
                    self.fail(run, f"{scope}: the log holds a commit ({frames} frames) but "
                              f"the snapshot was not changed")
                if killed and log_clean and phase in ("uncommitted", "header") \
                        and outcome != "kept":
                    self.fail(run, f"{scope}: the log holds no commit ({frames} frames) but "
                              f"the snapshot changed")
            if other_held is not None:
                state[other] = other_held
            key = phase if killed else "exited"
            bucket = min(13, int(fraction * 10))
            self.by_delay.setdefault(bucket, {})
            self.by_delay[bucket][key] = self.by_delay[bucket].get(key, 0) + 1
            self.phase[key] = self.phase.get(key, 0) + 1
            self.phase_outcome[(key, outcome)] = self.phase_outcome.get((key, outcome), 0) + 1
            if not put_first:
                u = self.rng.choice("ABC")
                self.c["recovery_put"] += 1
                if self.clean_put(scope, v[u], run, "the next put"):
                    state[scope] = u
            if held is None or other_held is None or raw is None:
                # Repair: a clean put to every scope, so one failure is reported once, not
                # again by every later run that reads the same torn scope.
                for s in SCOPES:
                    u = self.rng.choice("ABC")
                    if self.clean_put(s, v[u], run, "the repairing put"):
                        state[s] = u
            if run % 100 == 0:
                print(f"  ... {run} runs, {time.monotonic() - started:.0f} s, "
                      f"{len(self.failures)} failures", flush=True)
        ok, r = sqlite_integrity(self.db)
        if not ok:
            self.fail("end", f"final integrity_check: {(r.out + r.err).strip()[:300]}")
        doctor = run_cmd([self.binary, "doctor", "--db", self.db, "--json"])
        if doctor.rc != 0 or not healthy(doctor.out):
            self.fail("end", "doctor: " + doctor.describe())
        main_seconds = time.monotonic() - started
        fresh = self.fresh_file_runs() if self.fresh_runs else None
        total = time.monotonic() - started
        self.report(main_seconds, total, fresh)
        return 1 if self.failures else 0

    def fresh_file_runs(self):
        """A kill during the first put into a missing file: creation, WAL set-up, the five
        migrations, the write. Each run in a new directory."""
        v = self.variants
        base = os.path.join(self.work, "fresh")
        os.makedirs(base)
        times = []
        for i in range(5):
            d = os.path.join(base, f"t{i}")
            os.makedirs(d)
            r = run_with_stdin(put_argv(self.binary, os.path.join(d, "cache.sqlite"), "S1", v["A"]))
            if r.rc != 0:
                self.fail("fresh", "a first put failed: " + r.describe())
                return None
            times.append(r.seconds)
            shutil.rmtree(d)
        first = statistics.median(times)
        c = {"killed": 0, "exited": 0, "no_file": 0, "empty_file": 0, "partial_schema": 0,
             "changed": 0, "kept": 0}
        for run in range(1, self.fresh_runs + 1):
            label = f"fresh {run}"
            d = os.path.join(base, f"run-{run}")
            os.makedirs(d)
            db = os.path.join(d, "cache.sqlite")
            target = self.rng.choice("ABC")
            killed, rc, err = kill_put(self.binary, db, "S1", v[target],
                                       self.rng.uniform(0, first * 1.2))
            c["killed" if killed else "exited"] += 1
            if not killed and (rc != 0 or err.strip()):
                self.fail(label, f"unkilled first put exited {rc}: {err.strip()[:300]!r}",
                          save=False)
            exists = os.path.exists(db)
            if not exists:
                c["no_file"] += 1
                r = show(self.binary, db, "S1")
                if r.rc != 3 or "no such database" not in r.err or os.path.exists(db):
                    self.fail(label, "show of a missing file: " + r.describe(), save=False)
            else:
                if os.path.getsize(db) == 0:
                    c["empty_file"] += 1
                else:
                    ver = run_cmd(["sqlite3", "-readonly", db, "PRAGMA user_version"])
                    if ver.rc == 0 and ver.out.strip() not in ("5",):
                        c["partial_schema"] += 1
                ok, r = sqlite_integrity(db)
                if not ok:
                    self.fail(label, f"integrity_check: {(r.out + r.err).strip()[:300]}",
                              save=False)
                name, why = classify_show(show(self.binary, db, "S1"), v)
                if why:
                    self.fail(label, why, save=False)
                elif name not in ({"none", target} if killed else {target}):
                    self.fail(label, f"holds {name} after a killed first put of {target}",
                              save=False)
                elif name != "none":
                    c["changed"] += 1
                else:
                    c["kept"] += 1
            u = self.rng.choice("ABC")
            r = run_with_stdin(put_argv(self.binary, db, "S1", v[u]))
            if r.rc != 0 or r.err.strip():
                self.fail(label, "the next put: " + r.describe(), save=False)
            else:
                name, why = classify_show(show(self.binary, db, "S1"), v)
                if why or name != u:
                    self.fail(label, f"after the next put of {u}: {why or name}", save=False)
                ok, r = sqlite_integrity(db)
                if not ok:
                    self.fail(label, f"integrity_check after the next put: {r.out.strip()}",
                              save=False)
                mode = os.stat(db).st_mode & 0o777
                if mode != 0o600:
                    self.fail(label, f"database mode {oct(mode)}, not 0600", save=False)
            stray = moved_aside(d)
            if stray:
                self.fail(label, f"files beside the database: {stray}", save=False)
            shutil.rmtree(d)
        c["first_put_ms"] = first * 1000
        return c

    def report(self, main_seconds, total, fresh):
        c = self.c
        print(f"kill-writes: {self.runs} runs over one file in {main_seconds:.1f} s "
              f"({main_seconds / max(1, self.runs) * 1000:.0f} ms a run)")
        print("  kill delays: half uniform over 0-130% of the variant's median put, half over "
              "40-110%")
        print(f"  kills landed while put was running: {c['killed']}; "
              f"put had already exited: {c['exited']}")
        print(f"  snapshot changed: {c['changed']} (killed after its commit: "
              f"{c['changed_killed']}); kept the old one: {c['kept']} (all killed: "
              f"{c['kept_killed']})")
        names = {"absent": "no log (before open, or after close)", "empty": "log opened, empty",
                 "header": "log header written, no frame", "uncommitted":
                 "frames written, no commit (mid-transaction)", "committed":
                 "commit in the log (checkpoint/close)", "garbage": "log unreadable",
                 "exited": "exited before the kill"}
        print("  where the kill landed, from the log it left -> outcome:")
        for key in ("absent", "empty", "header", "uncommitted", "committed", "garbage",
                    "exited"):
            if key in self.phase:
                outs = ", ".join(f"{o or 'failed'} {n}" for (k, o), n in
                                 sorted(self.phase_outcome.items(), key=str) if k == key)
                print(f"    {names[key]:<45} {self.phase[key]:>5}  ({outs})")
        short = {"absent": "no-log", "empty": "empty", "header": "header", "uncommitted":
                 "mid-tx", "committed": "commit", "garbage": "garbage", "exited": "exited"}
        print("  by delay (% of median put): " + "; ".join(
            f"{b * 10}-{b * 10 + 10}%: " + " ".join(
                f"{short[k]} {n}" for k, n in sorted(self.by_delay[b].items()))
            for b in sorted(self.by_delay)))
        print(f"  puts right after a kill (other scope, before any check): "
              f"{c['put_after_kill']}; next puts after the checks: {c['recovery_put']}")
        if c["log_not_clean"]:
            print(f"  runs whose log held committed frames before the put (log oracle "
                  f"skipped): {c['log_not_clean']}")
        print(f"  checks: integrity_check ok {c['integrity_ok']}/{self.runs}, "
              f"{c['cli_reads']} CLI reads, {c['raw_reads']} raw-SQL reads "
              f"({c['sqlite_first']} runs with sqlite3 before the CLI)")
        if fresh:
            print(f"  fresh file: {self.fresh_runs} runs (first put median "
                  f"{fresh['first_put_ms']:.1f} ms): killed {fresh['killed']}, exited "
                  f"{fresh['exited']}; left no file {fresh['no_file']}, an empty file "
                  f"{fresh['empty_file']}, a partial schema {fresh['partial_schema']}; "
                  f"snapshot there {fresh['changed']}, none {fresh['kept']}")
        print(f"  total time {total:.1f} s")
        print(f"  failures: {len(self.failures)} (in {len(self.failed_runs)} runs)")
        for f in self.failures[:20]:
            print(f"    {f}")


def run_with_stdin(argv):
    with open(os.devnull, "rb") as null:
        return run_cmd(argv, stdin=null)


# ---------------------------------------------------------------------------------------------
# two-process soak

def soak_setup(binary, db, snapdir):
    variants = make_variants(snapdir)
    for scope in SCOPES:
        r = run_with_stdin(put_argv(binary, db, scope, variants["A"]))
        if r.rc != 0:
            raise SystemExit("error: seeding put failed: " + r.describe())
    return 0


def soak_loop(role, binary, db, snapdir, seconds, result_path, seed):
    variants = make_variants(snapdir, write=False)
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    text_show = os.environ.get("SOAK_TEXT_SHOW", "1") != "0"
    counts = {"ops": 0, "writes": 0, "refresh_failures": 0, "shows": 0, "text_shows": 0,
              "checks": 0,
              "doctors": 0, "errors": 0, "busy": 0, "partial": 0, "by_variant": {}}
    latencies = []
    intervals = []  # (start, end) of each command, CLOCK_MONOTONIC: comparable across processes
    failures = []

    def failed(message, result=None):
        failures.append(message)
        counts["errors"] += 1
        if result is not None and BUSY_PATTERN.search(result.err):
            counts["busy"] += 1
        print(f"FAIL {role}: {message}", file=sys.stderr, flush=True)

    last = "A"
    while time.monotonic() < deadline:
        counts["ops"] += 1
        if role == "writer":
            scope = "S1" if rng.random() < 0.85 else "S2"
            if rng.random() < 0.12:
                r = run_with_stdin([binary, "refresh-failed", "--db", db, *SCOPES[scope],
                                    "--reason", "soak_timeout", "--now", FAILURE_NOW, "--json"])
                counts["refresh_failures"] += 1
            else:
                last = rng.choice([n for n in "ABC" if n != last])
                r = run_with_stdin(put_argv(binary, db, scope, variants[last]))
                counts["writes"] += 1
            latencies.append(r.seconds)
            intervals.append((r.started, r.started + r.seconds))
            if r.rc != 0 or r.err.strip():
                failed(r.describe(), r)
            continue
        scope = "S1" if rng.random() < 0.85 else "S2"
        pick = rng.random()
        if pick < 0.03:
            r = run_cmd([binary, "doctor", "--db", db, "--json"])
            counts["doctors"] += 1
            latencies.append(r.seconds)
            intervals.append((r.started, r.started + r.seconds))
            if r.rc != 0 or r.err.strip() or not healthy(r.out):
                failed("doctor: " + r.describe() + f" {r.out[:300]!r}", r)
            continue
        if pick < 0.4:
            r = show(binary, db, scope)
            counts["shows"] += 1
            name, why = classify_show(r, variants)
        elif pick < 0.5 and text_show:
            r = run_cmd([binary, "show", "--db", db, *SCOPES[scope], "--now", READ_NOW])
            counts["text_shows"] += 1
            name, why = classify_show_text(r, variants)
        else:
            key = rng.choice(["pro", "lifetime", "team", "c_000", "c_399", "b_claim_only"])
            r = check(binary, db, scope, key)
            counts["checks"] += 1
            name, why = classify_check(r, key, variants)
        latencies.append(r.seconds)
        intervals.append((r.started, r.started + r.seconds))
        if why:
            if r.rc in (0, 1) and not r.err.strip():
                counts["partial"] += 1
                failures.append(f"partial read of {scope}: {why}")
                print(f"FAIL reader: partial read of {scope}: {why}", file=sys.stderr, flush=True)
            else:
                failed(why, r)
        elif name == "none":
            counts["partial"] += 1
            failures.append(f"{scope} read as empty although it was seeded")
        else:
            counts["by_variant"][name] = counts["by_variant"].get(name, 0) + 1
    counts["latency_ms"] = {
        "p50": statistics.median(latencies) * 1000 if latencies else 0,
        "p99": percentile(latencies, 0.99) * 1000 if latencies else 0,
        "max": max(latencies) * 1000 if latencies else 0,
    }
    counts["failures"] = failures[:20]
    counts["intervals"] = intervals
    with open(result_path, "w") as f:
        json.dump(counts, f)
    return 1 if failures else 0


def soak_report(db, writer_json, reader_json, seconds):
    w = json.load(open(writer_json)) if os.path.exists(writer_json) else None
    r = json.load(open(reader_json)) if os.path.exists(reader_json) else None
    failures = []
    if w is None:
        failures.append("the writer left no result")
    if r is None:
        failures.append("the reader left no result")
    ok, res = sqlite_integrity(db)
    if not ok:
        failures.append(f"final integrity_check: {(res.out + res.err).strip()[:300]}")
    stray = moved_aside(os.path.dirname(db), os.path.basename(db))
    if stray:
        failures.append(f"files beside the database: {stray}")
    w = w or {}
    r = r or {}
    busy = w.get("busy", 0) + r.get("busy", 0)
    errors = w.get("errors", 0) + r.get("errors", 0)
    partial = r.get("partial", 0)
    print(f"two-process-soak: {seconds} s, one writer and one reader process on one file")
    print(f"  writer: {w.get('writes', 0)} puts, {w.get('refresh_failures', 0)} refresh "
          f"failures recorded; latency p50 {w.get('latency_ms', {}).get('p50', 0):.1f} ms, "
          f"p99 {w.get('latency_ms', {}).get('p99', 0):.1f} ms, max "
          f"{w.get('latency_ms', {}).get('max', 0):.1f} ms")
    reads = sum(r.get(k, 0) for k in ("shows", "text_shows", "checks", "doctors"))
    print(f"  reader: {reads} reads ({r.get('shows', 0)} show --json, "
          f"{r.get('text_shows', 0)} show, {r.get('checks', 0)} check --json, "
          f"{r.get('doctors', 0)} doctor); saw variants {r.get('by_variant', {})}; latency p50 "
          f"{r.get('latency_ms', {}).get('p50', 0):.1f} ms, p99 "
          f"{r.get('latency_ms', {}).get('p99', 0):.1f} ms, max "
          f"{r.get('latency_ms', {}).get('max', 0):.1f} ms")
    writes = sorted(w.get("intervals", []))
    overlapping = 0
    for start, end in r.get("intervals", []):
        # Any writer command running at some instant of this read (sorted by start, short
        # lists: a linear scan is fine).
        if any(ws < end and we > start for ws, we in writes):
            overlapping += 1
    print(f"  reader commands whose lifetime overlapped a writer command: {overlapping} of "
          f"{len(r.get('intervals', []))}")
    print(f"  busy/locked errors: {busy}; other command errors: {errors - busy}; "
          f"partial reads: {partial}")
    print(f"  final integrity_check: {'ok' if ok else 'FAILED'}; files moved aside: "
          f"{len(stray)}")
    for f in (w.get("failures", []) + r.get("failures", []) + failures)[:20]:
        print(f"    {f}")
    bad = failures or busy or errors or partial
    if not w.get("writes") or not (r.get("shows") or r.get("checks")):
        print("  failure: a loop did no work")
        bad = True
    print(f"  result: {'FAILED' if bad else 'ok'}")
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------

def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "kill-writes":
        binary, work, runs, fresh, seed = args
        return KillWrites(binary, work, int(runs), int(fresh), int(seed)).main()
    if cmd == "soak-setup":
        return soak_setup(*args)
    if cmd in ("soak-writer", "soak-reader"):
        binary, db, snapdir, seconds, result, seed = args
        return soak_loop(cmd[5:], binary, db, snapdir, float(seconds), result, int(seed))
    if cmd == "soak-report":
        db, wj, rj, seconds = args
        return soak_report(db, wj, rj, seconds)
    print(f"unknown subcommand {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
