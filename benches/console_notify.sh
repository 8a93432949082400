#!/usr/bin/env bash
# What failing receivers cost a send: the same campaign of N realistic recipients sent twice
# through `msgbatch serve` against a sandbox in its own process, once with none and once with two
# receivers wanting every event, one that never answers and one that answers 500 (both served by
# this script). The receivers are notification channels (`notifications`, the default) or
# webhook endpoints (`webhooks`: progress every 1 %, every results page). Prints each send's
# recipients per second and the ratio (target: with failing receivers >= 0.95 x without), and how
# many requests the two receivers got.
#
#   bash benches/console_notify.sh 200000
#   bash benches/console_notify.sh 100000 webhooks
#
# Needs curl and python3. Uses target/release/msgbatch (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-200000}
receivers=${2:-notifications}
dir=${SCALE_DIR:-/tmp/msgbatch-scale}
bin=${MSGBATCH_BIN:-target/release/msgbatch}
[ -x "$bin" ] || cargo build --release
bash benches/scale.sh "$rows" data >/dev/null
csv="$dir/recipients-realistic-$rows.csv"
work=$(mktemp -d)
trap 'kill $serve_pid $sandbox_pid 2>/dev/null || true; rm -rf "$work"' EXIT
source benches/console_sandbox.sh
# The workspace's connection, as an administrator with shell access writes it; the key from the
# server's environment.
mkdir -p "$work/ws"
cat >"$work/ws/connections.toml" <<TOML
[bench]
endpoint = { base_url = "http://$addr/standard", gateway_url = "http://$addr/gateway" }
[bench.credentials]
group_id = "demo"
TOML
cat >"$work/campaign.toml" <<TOML
name = "notified"
kind = "sms"
connection = "bench"
[message]
service = 3001
text = "#{이름}님, 쿠폰 #{VAR1}이 도착했어요. #{VAR2}까지 사용 가능합니다."
callback_no = "0212345678"
[recipients]
path = "recipients.csv"
phone = "hp"
name = "name"
variables = { VAR1 = "VAR1", VAR2 = "VAR2" }
TOML
MSGBATCH_API_KEY=sbx-demo-key "$bin" serve --workspace "$work/ws" --listen 127.0.0.1:0 --allow-self-approval >"$work/serve.out" 2>&1 &
serve_pid=$!
until grep -q "Ctrl-C stops it." "$work/serve.out"; do sleep 0.1; done
python3 - "$work" "$csv" "$receivers" <<'PY'
import http.server, re, subprocess, sys, threading, time
sys.path.insert(0, "benches")
from console_session import Session, approved_campaign
work, csv, receivers = sys.argv[1], sys.argv[2], sys.argv[3]
person = Session(f"{work}/serve.out")
base, cookie, csrf, call = person.base, person.cookie, person.csrf, person.call

received = {"hang": 0, "fail": 0}
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        kind = self.server.kind
        received[kind] += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if kind == "hang":
            time.sleep(3600)
        self.send_response(500)
        self.end_headers()
    def log_message(self, *args):
        pass
urls = []
for kind in ("hang", "fail"):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.kind = kind
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    urls.append(f"http://127.0.0.1:{server.server_address[1]}/hook")

def send(name):
    cid, valid = approved_campaign(person, work, csv, name)
    start = time.monotonic()
    status, _, body = call(f"/campaigns/{cid}/start", {"csrf": csrf, "amount": str(valid)})
    assert status == 303, (status, body[:300])
    while True:
        _, _, page = call(f"/campaigns/{cid}")
        state = re.search(r'<span class="state ([a-z_]+)"', page).group(1)
        if state not in ("sending", "approved"):
            break
        time.sleep(0.2)
    elapsed = time.monotonic() - start
    assert state == "done", state
    while "files/report.csv" not in call(f"/campaigns/{cid}/results")[2]:
        time.sleep(0.5)
    return valid / elapsed, valid

alone, valid = send("without receivers")
webhook_events = ("campaign.submitted", "campaign.approved", "campaign.started", "campaign.paused",
    "campaign.stopped", "campaign.finished", "campaign.interrupted", "campaign.progress", "campaign.results")
for url in urls:
    if receivers == "webhooks":
        fields = [("csrf", csrf), ("url", url), ("progress_every", "1")] + [("event", e) for e in webhook_events]
        status, _, body = call("/webhooks", fields)
        assert status == 200, (status, body[:300])
    else:
        fields = [("csrf", csrf), ("kind", "webhook"), ("url", url)] + [("event", e) for e in
            ("approval_requested", "approved", "started", "paused", "finished")]
        status, _, body = call("/notifications", fields)
        assert status == 303, (status, body[:300])
failing, _ = send(f"with a hanging and a failing receiver ({receivers})")
print(f"{valid} recipients: no {receivers} {alone:,.0f}/s, a hanging and a failing receiver {failing:,.0f}/s, "
      f"ratio {failing / alone:.2f} (target >= 0.95); the hanging receiver got {received['hang']} requests, "
      f"the failing one {received['fail']}")
PY
