#!/usr/bin/env python3
"""`make fuzz-api`: schemathesis against a running vros, one run per OpenAPI document.

1. Finds edge at FUZZAPI_URL (default http://127.0.0.1:8080). When nothing answers there and
   the URL is make run's own, it starts bin/vros-dev (building it as `make run` does when it
   is missing) in the background, waits for it, and stops it (SIGINT, as Ctrl-C) at the end;
   any other URL must already answer.
2. Creates a fresh sandbox account through the admin API (the admin token from
   FUZZAPI_ADMIN_TOKEN, else .data/dev-secrets.json, else .data/demo-account.json), raises
   its plan's rate limits (so that 429s do not hide answers), and gives it through interface A
   one property with rates and a brand that sells it from the origin FUZZAPI_ORIGIN (default
   https://fuzz.example: the booking engine's requests carry it as `Origin`), and holds one
   checkout of that property (so that the checkout routes reach a real one).
3. Runs schemathesis on each document of FUZZAPI_DOCS (default: booking-engine interface-a
   interface-b admin; booking-engine always first, as interface A's cases change the brands,
   and admin always last, as it rotates and suspends the account), as edge serves it (GET /openapi/<name>.yaml), else the file edge/openapi/<name>.yaml,
   with hooks.py authenticating every request as the fresh account. Checks: no 5xx
   (not_a_server_error), and answers that conform to the document: status code, content type,
   headers and body schema. Admin's deleteAccount is left out (it would delete the account the
   run uses; the cleanup deletes it), and so are /healthz, /readyz and /metrics (edge's internal
   listener, another port). The bin/vros-dev this run starts has the booking engine's limits
   per address and per account off (VROS_EDGE_ENGINE_*=0, docs/limits.md); a running make run
   keeps its own, so many booking-engine cases are then answered 429 (documented, not a failure).
4. Deletes the fresh account and every account the admin run created (FUZZAPI_KEEP=1 keeps
   them), prints a summary (operations, cases, failures per document) and exits 1 when any
   check failed or a run did not finish, 2 when it could not run at all.

Bounds (all environment variables): FUZZAPI_MAX_EXAMPLES (per operation, default 20),
FUZZAPI_PHASES (default examples,coverage,fuzzing), FUZZAPI_WORKERS (default 1: threads hit
a CPython 3.11 race in ast, "AST constructor recursion depth mismatch"), FUZZAPI_TIMEOUT
(seconds per document, default 900), FUZZAPI_SEED (default 1: the same cases
every run), FUZZAPI_REPORTS (where the reports go, default bin/fuzzapi-reports).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_URL = "http://127.0.0.1:8080"
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
])
EXCLUDED = {
    "admin": ["--exclude-operation-id", "deleteAccount", "--exclude-tag", "operations"],
}


def env(name: str, default: str) -> str:
    v = os.environ.get(name, "")
    return v if v else default


def die(msg: str) -> None:
    """Stops the run as one that could not run (exit 2); cleanups in finally still run."""
    print(f"fuzz-api: {msg}", file=sys.stderr, flush=True)
    sys.exit(2)


def say(msg: str) -> None:
    print(f"fuzz-api: {msg}", flush=True)


def http(method: str, url: str, body=None, headers=None, timeout=30.0):
    """(status, parsed JSON or raw bytes); status 0 when nothing answers."""
    data = None
    h = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, headers=h, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return 0, b""
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def answers(url: str) -> bool:
    status, _ = http("GET", url + "/openapi/admin.yaml", timeout=5)
    return status != 0


class Stack:
    """bin/vros-dev started by this run (None when one was already running)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.log: Path | None = None

    def start(self, url: str, reports: Path) -> None:
        host = urllib.parse.urlsplit(url)
        if (host.hostname, host.port) not in (("127.0.0.1", 8080), ("localhost", 8080)):
            die(f"nothing answers at {url}, and only make run's own {DEFAULT_URL} can be started here")
        binary = ROOT / "bin" / "vros-dev"
        if not binary.exists():
            say("building bin/vros-dev (as make run does)")
            subprocess.run([env("GO", "go"), "build", "-o", str(binary), "./cmd/vros-dev"], cwd=ROOT / "devstack", check=True)
        self.log = reports / "vros-dev.log"
        say(f"nothing answers at {url}: starting bin/vros-dev in the background (log {self.log})")
        logf = open(self.log, "wb")
        # The booking engine's limits per client address would answer most cases 429 (one
        # address sends them all): off, as in the test stacks.
        e = dict(os.environ, VROS_EDGE_ENGINE_RATE_RPS="0", VROS_EDGE_ENGINE_ADDRESS_RPS="0",
                 VROS_EDGE_ENGINE_ADDRESS_CHECKOUTS="0")
        self.proc = subprocess.Popen([str(binary)], cwd=ROOT, stdout=logf, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True, env=e)
        deadline = time.monotonic() + float(env("FUZZAPI_START_TIMEOUT", "240"))
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                die(f"bin/vros-dev exited with {self.proc.returncode}; see {self.log}")
            if answers(url) and (ROOT / ".data" / "dev-secrets.json").exists():
                say("bin/vros-dev answers")
                return
            time.sleep(1)
        die(f"bin/vros-dev did not answer at {url} in time; see {self.log}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        say("stopping the bin/vros-dev this run started")
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def admin_token() -> str:
    for name in ("FUZZAPI_ADMIN_TOKEN", "VROS_EDGE_ADMIN_TOKEN"):
        if os.environ.get(name):
            return os.environ[name]
    for name in ("dev-secrets.json", "demo-account.json"):
        p = ROOT / ".data" / name
        if p.exists():
            tok = json.loads(p.read_text()).get("admin_token")
            if tok:
                return tok
    die("no admin token (set FUZZAPI_ADMIN_TOKEN, or run make run so that .data/dev-secrets.json holds it)")


def setup_account(url: str, token: str) -> dict:
    """The fresh account: its credentials, a property with rates, a brand selling it from
    FUZZAPI_ORIGIN, one checkout held, generous rate limits."""
    auth = {"Authorization": "Bearer " + token}
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    status, ans = http("POST", url + "/admin/v1/accounts", {"name": "fuzz-api " + stamp, "sandbox": True}, auth)
    if status != 201:
        die(f"creating the account answered {status}: {ans!r}")
    creds = dict(ans["data"])
    creds["admin_token"] = token
    acc = creds["account_id"]
    say(f"created account {acc} (sandbox)")
    status, ans = http("POST", f"{url}/admin/v1/accounts/{acc}/plan",
                       {"rate_rps": 1000, "rate_burst": 2000, "max_concurrent": 32}, auth)
    if status != 200:
        say(f"warning: raising the plan answered {status}: {ans!r}")
    basic = base64.b64encode(f"{creds['basic_user']}:{creds['basic_password']}".encode()).decode()
    a = {"Authorization": "Basic " + basic, "servicekey": creds["servicekey"], "servicepass": creds["servicepass"]}
    code = "FUZZ1"
    status, ans = http("POST", url + "/api/property", {"action": "create", "property": {
        "internal_code": code, "name": "Fuzzing Villa with a Sea View", "type": "Villa", "maxguest": 6,
        "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground", "space": {"value": 140, "unit": "meters"},
        "address": "1 Ocean Drive", "city": "Miami Beach", "postcode": "33139", "country": "US",
        "latitude": 25.7907, "longitude": -80.13}}, a)
    if status != 200 or not isinstance(ans, dict) or "data" not in ans:
        die(f"creating the property answered {status}: {ans!r}")
    creds["property_id"] = str(ans["data"]["property_id"])
    creds["internal_code"] = code
    status, ans = http("POST", url + "/api/property-rate", {"internal_code": code,
        "rate": {"daily_price": 180, "weekend_price": 220, "weekly_price": 1100, "minimum_stay": 2},
        "los": [{"days": 14, "discount": 10}],
        "setting": {"standard_occupants": 4, "accept_booking_upto": 12, "apply_weekend_price": True,
                    "default_allow_checkin": "All", "default_allow_checkout": "All",
                    "advanced_notice_booking_from": "1"}}, a)
    if status != 200:
        say(f"warning: setting the rates answered {status}: {ans!r}")
    say(f"property {creds['property_id']} ({code}) with rates")
    origin = env("FUZZAPI_ORIGIN", "https://fuzz.example")
    status, ans = http("POST", url + "/api/account-brand", {"action": "create", "brand": {
        "name": "Fuzzing Villas", "origins": [origin], "properties": [code]}}, a)
    if status != 200 or not isinstance(ans, dict) or "data" not in ans:
        die(f"creating the brand answered {status}: {ans!r}")
    creds["brand_id"] = str(ans["data"]["brand_id"])
    creds["origin"] = origin
    say(f"brand {creds['brand_id']} selling it from {origin}")
    creds["checkout_id"] = hold_checkout(url, creds)
    return creds


def hold_checkout(url: str, creds: dict) -> str:
    """A checkout of the property held through the booking engine ("" when none could be)."""
    base = f"{url}/widget/api/v1/{creds['owner_token']}"
    h = {"Origin": creds["origin"]}
    # Give catalog-svc and booking-svc the time to read the new property, rates and brand.
    arrival = datetime.date.today() + datetime.timedelta(days=45)
    stay = {"property": int(creds["property_id"]), "arrival": arrival.isoformat(),
            "departure": (arrival + datetime.timedelta(days=3)).isoformat(), "adults": 2}
    deadline = time.monotonic() + 30
    status, ans = 0, b""
    while time.monotonic() < deadline:
        status, ans = http("POST", base + "/checkouts", stay, dict(h, **{"Idempotency-Key": "fuzz-api-setup"}))
        if status == 201:
            say(f"checkout {ans['data']['id']} held")
            return str(ans["data"]["id"])
        time.sleep(1)
    say(f"warning: holding a checkout answered {status}: {ans!r}")
    return ""


def delete_accounts(url: str, token: str, ids: list[str]) -> None:
    for acc in ids:
        status, ans = http("DELETE", f"{url}/admin/v1/accounts/{acc}", headers={"Authorization": "Bearer " + token}, timeout=120)
        if status not in (200, 404):
            say(f"warning: deleting account {acc} answered {status}: {ans!r}")


def schema_location(url: str, name: str, reports: Path) -> tuple[str, str]:
    """The document as edge serves it, saved to a file; else the file in edge/openapi."""
    status, raw = http("GET", f"{url}/openapi/{name}.yaml")
    if status == 200 and raw:
        p = reports / f"{name}.yaml"
        p.write_bytes(raw if isinstance(raw, bytes) else json.dumps(raw).encode())
        return str(p), "served by edge"
    return str(ROOT / "edge" / "openapi" / f"{name}.yaml"), "edge/openapi file (edge serves none)"


# SECRET_HEADERS are the credential headers a printed command never shows (schemathesis's
# report filters only some of them: servicepass went out as sent).
SECRET_HEADERS = {"authorization", "servicekey", "servicepass", "365villaskey", "365villaspass"}


def curl_of(case: dict, request: dict) -> str:
    """A curl command that sends a case again (credentials as the report filters them)."""
    parts = ["curl", "-X", request.get("method", case.get("method", "GET"))]
    for name, values in (request.get("headers") or {}).items():
        for v in values if isinstance(values, list) else [values]:
            if name.lower() in SECRET_HEADERS:
                v = "[Filtered]"
            parts += ["-H", f"{name}: {v}"]
    body = case.get("body")
    if body is not None:
        mt = case.get("media_type") or "application/json"
        if not any(n.lower() == "content-type" for n in (request.get("headers") or {})):
            parts += ["-H", f"Content-Type: {mt}"]
        if mt == "application/x-www-form-urlencoded" and isinstance(body, dict):
            parts += ["--data", urllib.parse.urlencode(body, doseq=True)]
        elif mt == "multipart/form-data" and isinstance(body, dict):
            for k, v in body.items():
                parts += ["-F", f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
        else:
            parts += ["--data-binary", body if isinstance(body, str) else json.dumps(body)]
    parts.append(request.get("uri", case.get("path", "")))
    return " ".join(_quote(p) for p in parts)


def _quote(s: str) -> str:
    if s and all(c.isalnum() or c in "-_./:=@%+," for c in s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def summarize(reports: Path) -> dict:
    """Operations, cases and failure classes from schemathesis's NDJSON events."""
    ops: set[str] = set()
    cases: set[str] = set()
    failures: dict[str, dict] = {}
    ndjson = next(reports.glob("*.ndjson"), None)
    if ndjson is None:
        return {"operations": 0, "cases": 0, "failures": {}, "errors": ["no NDJSON report"]}
    errors: list[str] = []
    for line in ndjson.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if "NonFatalError" in ev:
            errors.append(json.dumps(ev["NonFatalError"])[:400])
        fin = ev.get("ScenarioFinished")
        if not fin:
            continue
        rec = fin.get("recorder") or {}
        label = rec.get("label", "")
        if label:
            ops.add(label)
        rec_cases = rec.get("cases") or {}
        cases.update(rec_cases)
        for cid, checks in (rec.get("checks") or {}).items():
            for chk in checks:
                if chk.get("status") != "failure":
                    continue
                f = (chk.get("failure_info") or {}).get("failure") or {}
                # One class per check, operation and kind of failure (the title, and for a
                # status code the status).
                status = ((rec.get("interactions") or {}).get(cid) or {}).get("response", {}).get("status_code")
                key = f"{chk.get('name')}|{label}|{f.get('title', '')}|{status if chk.get('name') != 'response_schema_conformance' else ''}"
                if key in failures:
                    failures[key]["count"] += 1
                    continue
                inter = (rec.get("interactions") or {}).get(cid) or {}
                case = (rec_cases.get(cid) or {}).get("value") or {}
                failures[key] = {"check": chk.get("name"), "operation": label, "title": f.get("title", ""),
                                 "message": f.get("message", ""), "status": status, "count": 1,
                                 "mode": ((case.get("meta") or {}).get("generation") or {}).get("mode", ""),
                                 "curl": curl_of(case, inter.get("request") or {})}
    return {"operations": len(ops), "cases": len(cases), "failures": failures, "errors": errors}


def main() -> int:
    url = env("FUZZAPI_URL", DEFAULT_URL).rstrip("/")
    docs = env("FUZZAPI_DOCS", "booking-engine interface-a interface-b admin").split()
    # booking-engine first: interface A's cases change the account's brands (account-brand,
    # account-settings' brands list), and without the brand of FUZZAPI_ORIGIN every booking
    # engine case is 403. admin last: its rotateCredentials, suspendAccount and revokeAccount
    # change the fresh account's credentials, and every later request would be a failed
    # authentication (401, then 429 for the whole address, the cleanup's deletes included).
    docs = ([d for d in docs if d == "booking-engine"] + [d for d in docs if d not in ("booking-engine", "admin")]
            + [d for d in docs if d == "admin"])
    reports = Path(env("FUZZAPI_REPORTS", str(ROOT / "bin" / "fuzzapi-reports"))).resolve()
    shutil.rmtree(reports, ignore_errors=True)
    reports.mkdir(parents=True)
    venv_bin = Path(sys.executable).parent
    stack = Stack()
    results: dict[str, dict] = {}
    created: list[str] = []
    token = ""
    try:
        if not answers(url):
            stack.start(url, reports)
        token = admin_token()
        creds = setup_account(url, token)
        created.append(creds["account_id"])
        creds_file = reports / "creds.json"
        creds_file.write_text(json.dumps(creds))
        created_file = reports / "created-accounts.txt"
        for name in docs:
            loc, where = schema_location(url, name, reports)
            out = reports / name
            out.mkdir()
            cmd = [str(venv_bin / "schemathesis"), "run", loc, "--url", url,
                   "--checks", CHECKS,
                   "--max-examples", env("FUZZAPI_MAX_EXAMPLES", "20"),
                   "--phases", env("FUZZAPI_PHASES", "examples,coverage,fuzzing"),
                   "--workers", env("FUZZAPI_WORKERS", "1"),
                   "--seed", env("FUZZAPI_SEED", "1"),
                   "--generation-with-security-parameters", "false",
                   "--generation-database", "none",
                   "--request-timeout", "60",
                   "--suppress-health-check", "all",
                   "--report", "ndjson,junit", "--report-dir", str(out),
                   "--no-color"] + EXCLUDED.get(name, [])
            e = dict(os.environ, SCHEMATHESIS_HOOKS="hooks", PYTHONPATH=str(HERE), PYTHONDONTWRITEBYTECODE="1", FUZZAPI_DOC=name,
                     FUZZAPI_CREDS=str(creds_file), FUZZAPI_CREATED=str(created_file))
            say(f"{name}: {where}; output in {out}/output.txt")
            started = time.monotonic()
            with open(out / "output.txt", "wb") as log:
                try:
                    rc = subprocess.run(cmd, env=e, stdout=log, stderr=subprocess.STDOUT,
                                        timeout=float(env("FUZZAPI_TIMEOUT", "900"))).returncode
                except subprocess.TimeoutExpired:
                    rc = -1
            res = summarize(out)
            res["rc"], res["seconds"] = rc, round(time.monotonic() - started)
            results[name] = res
            say(f"{name}: {res['operations']} operations, {res['cases']} cases, {len(res['failures'])} failure classes, exit {rc}, {res['seconds']} s")
        if created_file.exists():
            created += [x for x in created_file.read_text().split() if x not in created]
    finally:
        if token and created and env("FUZZAPI_KEEP", "") != "1":
            delete_accounts(url, token, created)
        stack.stop()

    print()
    print(f"{'document':<14}{'operations':>11}{'cases':>8}{'failures':>10}  {'exit':>5}  {'time':>6}")
    bad = False
    for name, r in results.items():
        print(f"{name:<14}{r['operations']:>11}{r['cases']:>8}{len(r['failures']):>10}  {r['rc']:>5}  {r['seconds']:>5}s")
        bad = bad or bool(r["failures"]) or r["rc"] != 0
    for name, r in results.items():
        for key, f in r["failures"].items():
            print(f"\n[{name}] {f['check']} on {f['operation']}: {f['title']} (HTTP {f['status']}, {f['count']} case(s), {f['mode']})")
            if f["message"]:
                print("  " + f["message"].strip().replace("\n", "\n  ")[:1500])
            if f["curl"]:
                print("  reproduce: " + f["curl"].strip().replace("\n", "\n  ")[:3000])
        for err in r["errors"][:10]:
            print(f"\n[{name}] error: {err}")
        if r["rc"] == -1:
            print(f"\n[{name}] did not finish within FUZZAPI_TIMEOUT")
    print(f"\nreports: {reports}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
