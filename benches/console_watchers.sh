#!/usr/bin/env bash
# What watching costs a send: the same campaign of N realistic recipients sent twice through
# `msgbatch serve` against a sandbox in its own process, once with one person reloading the
# campaign's page and once with W more browsers on its live page (each holding the Server-Sent
# Events stream and reloading the page every 5 s). Prints each send's recipients per second and the
# ratio (target: watched >= 0.90 x unwatched), the longest wait between two live updates a watcher
# saw (target: 1 s), and the serve process's CPU for each send (the
# report the console writes after a run is waited for, and not counted).
#
#   bash benches/console_watchers.sh 1000000 50
#
# Needs curl and python3. Uses target/release/msgbatch (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
watchers=${2:-50}
dir=${SCALE_DIR:-/tmp/msgbatch-scale}
bin=${MSGBATCH_BIN:-target/release/msgbatch}
[ -x "$bin" ] || cargo build --release
bash benches/scale.sh "$rows" data >/dev/null
csv="$dir/recipients-realistic-$rows.csv"
work=$(mktemp -d)
trap 'kill $serve_pid $sandbox_pid 2>/dev/null || true; rm -rf "$work"' EXIT
source benches/console_sandbox.sh
printf 'sbx-demo-key' >"$work/key"
chmod 600 "$work/key"
cat >"$work/campaign.toml" <<TOML
name = "watched"
kind = "sms"
endpoint = { base_url = "http://$addr/standard", gateway_url = "http://$addr/gateway" }
[credentials]
api_key_file = "$work/key"
group_id = "demo"
[message]
service = 3001
text = "[데모몰] #{이름}님, 쿠폰 #{VAR1}이 도착했어요. #{VAR2}까지 사용 가능합니다."
callback_no = "0212345678"
[recipients]
path = "recipients.csv"
phone = "hp"
name = "name"
variables = { VAR1 = "VAR1", VAR2 = "VAR2" }
[send]
quiet_hours = "off"
TOML
"$bin" serve --workspace "$work/ws" --listen 127.0.0.1:0 --allow-self-approval >"$work/serve.out" 2>&1 &
serve_pid=$!
until grep -q "Ctrl-C stops it." "$work/serve.out"; do sleep 0.1; done
python3 - "$work" "$csv" "$serve_pid" "$watchers" <<'PY'
import re, subprocess, sys, threading, time, urllib.request
sys.path.insert(0, "benches")
from console_session import Session, approved_campaign, cpu
work, csv, pid, watchers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
person = Session(f"{work}/serve.out")
base, cookie, csrf, call = person.base, person.cookie, person.csrf, person.call

def send(watched):
    cid, valid = approved_campaign(person, work, csv, "watched")
    stop = threading.Event()
    gaps = []
    def watch():
        # A browser on the live page: the event stream, and the page itself every 5 s.
        while not stop.is_set():
            request = urllib.request.Request(base + f"/campaigns/{cid}/live/events", headers={"Cookie": cookie})
            try:
                with urllib.request.urlopen(request, timeout=30) as stream:
                    last_page = time.monotonic()
                    last_event = None
                    for line in stream:
                        if stop.is_set():
                            return
                        if line.startswith(b"event: view"):
                            now = time.monotonic()
                            if last_event is not None:
                                gaps.append(now - last_event)
                            last_event = now
                        if time.monotonic() - last_page > 5:
                            urllib.request.urlopen(urllib.request.Request(base + f"/campaigns/{cid}/live", headers={"Cookie": cookie})).read()
                            last_page = time.monotonic()
            except Exception:
                time.sleep(0.1)
    cpu_before = cpu(pid)
    start = time.monotonic()
    status, headers, body = call(f"/campaigns/{cid}/start", {"csrf": csrf, "amount": str(valid)})
    assert status == 303, (status, body[:300])
    threads = [threading.Thread(target=watch, daemon=True) for _ in range(watchers if watched else 0)]
    for t in threads: t.start()
    while True:
        _, _, page = call(f"/campaigns/{cid}")
        state = re.search(r'<span class="state ([a-z_]+)"', page).group(1)
        if state not in ("sending", "approved"):
            break
        time.sleep(0.2)
    elapsed = time.monotonic() - start
    used = cpu(pid) - cpu_before
    stop.set()
    assert state == "done", state
    # The console writes the report (CSV, Parquet, Excel) once the run has ended: let it finish
    # before the next send, which would otherwise pay for it.
    while "files/report.csv" not in call(f"/campaigns/{cid}/results")[2]:
        time.sleep(0.5)
    return valid / elapsed, used, valid, max(gaps, default=0.0)

alone, alone_cpu, valid, _ = send(False)
watched, watched_cpu, _, gap = send(True)
print(f"{valid} recipients: unwatched {alone:,.0f}/s (serve CPU {alone_cpu:.1f} s), "
      f"{watchers} watching {watched:,.0f}/s (serve CPU {watched_cpu:.1f} s), ratio {watched / alone:.2f} (target >= 0.90)")
print(f"live page: longest wait between two updates of one watcher {gap:.2f} s (target <= 1 s)")
PY
