#!/usr/bin/env python3
"""Runs the escape corpus (manifest.jsonl) through `kz verify` and checks that no attack had
its side effect (docs/sandbox.md, "Escape corpus").

Every candidate is rendered with the paths of a throw-away world: the verifier's home (HOME
of kz), its compile cache with a prebuilt library, a job store (SQLite), another client's
candidate, a neighbour process per entry, a TCP listener on the host's loopback and a unix
socket. The entries are split over --shards `kz verify --manifest` runs at once (each
shard with a world of its own; the CUDA entries, whose builds take minutes, in one of their
own); in each, every attack is followed by a known-correct
sample (which is prestarted while the attack runs). Checked per entry: the protected files
are unchanged, its neighbour is alive, kz itself survived (both verdicts printed), no
process carrying its marker is left, nothing reached the listeners, the attack's verdict is
not `correct` and names the cause, the next sample is `correct`, stages.sandbox says
"applied". --control runs the entries marked `control` with --sandbox=off and checks that
their side effect DOES happen there (so the checks can fail).

Usage: run_escape.py KZ [--gpu] [--only ID,...] [--control] [--shards N] [--json OUT]
Exit 0 when every check passed.
"""
import argparse, base64, concurrent.futures, hashlib, json, os, re, secrets, signal, socket, sqlite3, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TASK = os.path.join(REPO, "examples/tasks/relu.py")
CLEAN = os.path.join(REPO, "examples/candidates/relu_triton_ok.py")


class World:
    """The throw-away host state the attacks aim at."""

    def __init__(self, root, runtime_lib):
        self.root = root
        self.home = f"{root}/home"
        self.cache = f"{root}/cache"
        self.store = f"{self.cache}/serve/jobs.db"
        self.prebuilt = f"{self.cache}/v3/ab/abcdef/libfake.so"
        self.other = f"{root}/clients/other/candidate.py"
        self.secret = "SECRET-" + secrets.token_hex(8)
        self.runtime_lib = f"{root}/lib/libkz_runtime.so"
        self.triton_cache = f"{self.home}/.triton/cache"
        self.sock = f"{self.home}/kz.sock"
        for d in [self.home, self.triton_cache, os.path.dirname(self.store), os.path.dirname(self.prebuilt),
                  os.path.dirname(self.other), f"{self.cache}/tmp", os.path.dirname(self.runtime_lib)]:
            os.makedirs(d, exist_ok=True)
        open(f"{self.home}/.bashrc", "w").write("# sentinel\n")
        open(f"{self.triton_cache}/sentinel.json", "w").write("{}")
        open(self.prebuilt, "wb").write(b"\x7fELF sentinel library")
        open(self.other, "w").write(f"# another client's candidate\nKEY = '{self.secret}'\n")
        os.chmod(self.other, 0o600)
        with open(runtime_lib, "rb") as src, open(self.runtime_lib, "wb") as dst:
            dst.write(src.read())
        db = sqlite3.connect(self.store)
        db.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, payload TEXT)")
        db.executemany("INSERT INTO jobs (payload) VALUES (?)", [("a",), ("b",), ("c",)])
        db.commit()
        db.close()
        self.received = []  # what reached the listeners
        self._listen()

    def _listen(self):
        tcp = socket.socket()
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(16)
        self.port = tcp.getsockname()[1]
        unix = socket.socket(socket.AF_UNIX)
        unix.bind(self.sock)
        unix.listen(16)
        for s in (tcp, unix):
            threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, s):
        while True:
            conn, _ = s.accept()
            conn.settimeout(2)
            try:
                self.received.append(conn.recv(4096).decode(errors="replace") or "<connected>")
            except OSError:
                self.received.append("<connected>")
            conn.close()

    def protected(self):
        """Hashes of every file the attacks must not change (the home, the cache outside kz's
        own tmp, the store, the other client's file, the runtime library) and the worker
        package's and venv's sitecustomize (must not appear)."""
        out = {}
        for top in (self.home, self.cache, os.path.dirname(self.other), os.path.dirname(self.runtime_lib)):
            for d, dirs, files in os.walk(top):
                if d.startswith(f"{self.cache}/tmp") or d.startswith(f"{self.cache}/extract") or "/pch" in d:
                    continue
                for f in files:
                    p = os.path.join(d, f)
                    if p == self.sock:
                        continue
                    try:
                        out[p] = hashlib.sha256(open(p, "rb").read()).hexdigest()
                    except OSError as e:
                        out[p] = str(e)
        for p in [f"{REPO}/python/sitecustomize.py", f"{REPO}/python/kz_worker/sitecustomize.py"]:
            out[p] = os.path.exists(p)
        return out


def render(entry, world, victim, marker):
    text = open(os.path.join(HERE, entry["file"])).read()
    subs = {"@HOME@": world.home, "@HOME_B64@": base64.b64encode(world.home.encode()).decode(),
            "@CACHE@": world.cache, "@STORE@": world.store, "@OTHER@": world.other, "@VICTIM@": str(victim.pid),
            "@MARKER@": marker, "@PREBUILT@": world.prebuilt, "@RUNTIME_LIB@": world.runtime_lib,
            "@PKG_DIR@": f"{REPO}/python", "@PORT@": str(world.port), "@SOCK@": world.sock,
            "@TRITON_CACHE@": world.triton_cache}
    for k, v in subs.items():
        text = text.replace(k, v)
    return text


def marker_processes(marker):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in open(f"/proc/{pid}/cmdline", "rb").read():
                    found.append(pid)
            except OSError:
                pass
    return found


def files_named(top, marker):
    hits = []
    for d, _, files in os.walk(top):
        hits += [os.path.join(d, f) for f in files if marker in f]
    return hits


def run_kz(kz, world, entries, mode, extra):
    """One kz verify over [attack, clean] * len(entries). Returns (verdicts, stdout+stderr, rc)."""
    manifest = f"{world.root}/manifest-{mode}.jsonl"
    with open(manifest, "w") as m:
        for e in entries:
            m.write(json.dumps({"task": TASK, "candidate": e["_path"]}) + "\n")
            m.write(json.dumps({"task": TASK, "candidate": CLEAN}) + "\n")
    env = dict(os.environ, HOME=world.home, KZ_RUNTIME_LIB=world.runtime_lib)
    cmd = [kz, "verify", "--manifest", manifest, "--json", "--no-screen", "--cache-dir", world.cache,
           "--sandbox", mode, "--sandbox-scratch-mib", "64", "--sandbox-shm-mib", "64", "--timeout", "120", *extra]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3000)
    verdicts = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    return verdicts, p.stdout + p.stderr, p.returncode


def text_of(v):
    err = v.get("error") or {}
    return " ".join(str(x) for x in [v.get("reason", ""), err.get("message", ""), err.get("traceback", ""),
                                     json.dumps(v.get("stages", {}).get("compile", {}).get("diagnostics", ""))])


def check_entry(e, world, attack_v, clean_v, before, after, output, sandboxed):
    """Returns {check: (ok, detail)} for one entry."""
    marker, victim = e["_marker"], e["_victim"]
    # Files that existed must be unchanged; new files count outside the cache (kz itself
    # publishes builds into the cache; an attack's new file there carries its marker).
    changed = sorted([p for p in before if before[p] != after.get(p)] +
                     [p for p in after if p not in before and not p.startswith(world.cache + "/")])
    res = {
        "protected_files_unchanged": (not changed, changed[:5]),
        "neighbour_alive": (victim.poll() is None, f"pid {victim.pid}"),
        "supervisor_survived": (attack_v is not None and clean_v is not None, "both verdicts printed"),
        "no_process_left": (not marker_processes(marker), marker),
        "nothing_reached_listeners": (not any(marker in r for r in world.received), world.received[-3:]),
        "no_marker_files": (not (files_named(world.root, marker) + files_named("/tmp", marker)), marker),
        "secret_not_leaked": (world.secret not in output, "other client's secret"),
    }
    if attack_v is not None:
        st = attack_v.get("status")
        if e["expect"] == "blocked":
            res["attack_not_correct"] = (st != "correct", st)
            res["verdict_names_cause"] = (bool(re.search(e["cause"], text_of(attack_v))), text_of(attack_v)[:300])
        if sandboxed:
            sb = attack_v.get("stages", {}).get("sandbox", {})
            res["stages_sandbox_applied"] = (sb.get("status") == "applied", sb)
    if clean_v is not None:
        res["next_sample_correct"] = (clean_v.get("status") == "correct", clean_v.get("reason", "")[:300])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kz")
    ap.add_argument("--gpu", action="store_true", help="also the entries labelled gpu_only (CUDA run)")
    ap.add_argument("--only", default="")
    ap.add_argument("--control", action="store_true", help="also check that the control entries escape with --sandbox=off")
    ap.add_argument("--shards", type=int, default=3,
                    help="kz verify processes at once, each with its own world; the entries that "
                         "compile CUDA (the slow ones) get one of their own")
    ap.add_argument("--json", default="")
    ap.add_argument("--runtime-lib", default=os.environ.get("KZ_RUNTIME_LIB", f"{REPO}/build/lib/libkz_runtime.so"))
    a = ap.parse_args()
    entries = [json.loads(l) for l in open(os.path.join(HERE, "manifest.jsonl"))]
    if a.only:
        entries = [e for e in entries if e["id"] in a.only.split(",")]
    if not a.gpu:
        entries = [e for e in entries if not e["gpu_only"]]
    # Rounds: the entries split over shards under --sandbox=require, and the control entries
    # under --sandbox=off. Each round has a world of its own (home, cache, store, listeners),
    # so a side effect is attributed to its round, and a control's escape touches no other.
    shards = max(1, min(a.shards, len(entries)))
    rounds = [(part, "require", False) for part in split(entries, shards)]
    if a.control:
        rounds.append(([dict(e) for e in entries if e["control"]], "off", True))
    report = {"entries": {}, "control": {}}
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(len(rounds)) as pool:
        results = list(pool.map(lambda r: one_round(a, *r), rounds))
    failed = 0
    for (_, _, control), (n_failed, out, log) in zip(rounds, results):
        print(log, end="")
        failed += n_failed
        report["control" if control else "entries"].update(out)
    if a.json:
        json.dump(report, open(a.json, "w"), indent=1, default=str)
    print(f"{len(report['entries'])} entries ({shards} shards at once), {len(report['control'])} controls, "
          f"{failed} failed, {time.time() - t0:.0f} s")
    return 1 if failed else 0


def split(entries, shards):
    """The entries over `shards` parts: those that compile CUDA (minutes of nvcc each, in the
    stage before any run) in a part of their own, the others dealt round-robin."""
    heavy = [e for e in entries if e["backend"] == "cuda"]
    light = [e for e in entries if e["backend"] != "cuda"]
    if not heavy or not light or shards < 2:
        return [entries[i::shards] for i in range(shards)]
    return [heavy] + [light[i::shards - 1] for i in range(shards - 1)]


def one_round(a, entries, mode, control):
    """One kz verify over `entries` in a fresh world. Returns (failed, report, log text)."""
    if not entries:
        return 0, {}, ""
    with tempfile.TemporaryDirectory(prefix="kz-escape-") as root:
        os.chmod(root, 0o755)
        world = World(root, a.runtime_lib)
        out, log = {}, []
        failed = run_round(a.kz, world, entries, mode, out, log, control=control)
        return failed, out, "".join(line + "\n" for line in log)


def run_round(kz, world, entries, mode, out, log, control=False):
    os.makedirs(f"{world.root}/cands", exist_ok=True)
    for e in entries:
        e["_marker"] = "kzmark" + secrets.token_hex(6)
        e["_victim"] = subprocess.Popen(["sleep", "3600"])
        e["_path"] = f"{world.root}/cands/{e['id']}-{mode}.py"
        open(e["_path"], "w").write(render(e, world, e["_victim"], e["_marker"]))
    before = world.protected()
    t0 = time.time()
    verdicts, output, rc = run_kz(kz, world, entries, mode, [])
    time.sleep(0.5)
    after = world.protected()
    failed = 0
    by_candidate = {}
    for v in verdicts:
        by_candidate.setdefault(v.get("candidate", {}).get("path", v.get("label", "")), []).append(v)
    for i, e in enumerate(entries):
        attack_v = verdicts[2 * i] if 2 * i < len(verdicts) else None
        clean_v = verdicts[2 * i + 1] if 2 * i + 1 < len(verdicts) else None
        res = check_entry(e, world, attack_v, clean_v, before, after, output, mode != "off")
        if control:  # the side effect must show in at least one check
            escaped = [k for k, (ok, _) in res.items() if not ok and k not in ("attack_not_correct", "verdict_names_cause")]
            ok = bool(escaped)
            log.append(f"{'ok  ' if ok else 'FAIL'} control {e['id']} (--sandbox=off): escaped via {escaped}")
            out[e["id"]] = {"escaped_without_sandbox": escaped}
        else:
            bad = {k: d for k, (good, d) in res.items() if not good}
            ok = not bad
            log.append(f"{'ok  ' if ok else 'FAIL'} {e['id']}: {e['attack']}" + ("" if ok else f"\n     {bad}"))
            out[e["id"]] = {"ok": ok, "status": attack_v and attack_v.get("status"),
                            "reason": attack_v and attack_v.get("reason", "")[:200], "failed": bad}
        failed += not ok
        if e["_victim"].poll() is None:
            e["_victim"].kill()
        e["_victim"].wait()
    log.append(f"[{mode}] {len(entries)} entries in {time.time() - t0:.0f} s, kz exit {rc}")
    if len(verdicts) != 2 * len(entries):
        log.append(output[-3000:])
    return failed


if __name__ == "__main__":
    sys.exit(main())
