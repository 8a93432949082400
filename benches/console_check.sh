#!/usr/bin/env bash
# The console's check page against `msgbatch validate` on the same file, and an idle console's CPU.
# Makes N realistic recipients (benches/scale.sh's rows), times `msgbatch validate` on them, then
# starts `msgbatch serve` on a new workspace, signs in through its one-time link, uploads the file
# and times the check (POST /campaigns/ID/check until the check page answers), as a browser would.
# Last, it reads the serve process's CPU time over 30 idle seconds, 5 s after the check.
#
#   bash benches/console_check.sh 1000000
#
# Needs curl, python3 and GNU time. Uses target/release/msgbatch (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
dir=${SCALE_DIR:-/tmp/msgbatch-scale}
bin=${MSGBATCH_BIN:-target/release/msgbatch}
[ -x "$bin" ] || cargo build --release
bash benches/scale.sh "$rows" data >/dev/null
csv="$dir/recipients-realistic-$rows.csv"
work=$(mktemp -d)
trap 'kill $serve_pid 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/campaign.toml" <<TOML
name = "console-check"
kind = "sms"
endpoint = "sandbox"
[message]
service = 3001
text = "[데모몰] #{이름}님, 쿠폰 #{VAR1}이 도착했어요. #{VAR2}까지 사용 가능합니다."
callback_no = "0212345678"
[recipients]
path = "$csv"
phone = "hp"
name = "name"
variables = { VAR1 = "VAR1", VAR2 = "VAR2" }
[prices]
sms = 9
TOML
validate_best=999
for _ in 1 2 3; do
    start=$(date +%s.%N)
    "$bin" validate "$work/campaign.toml" --rejects "$work/rejects.csv" >/dev/null
    t=$(echo "$(date +%s.%N) - $start" | bc)
    validate_best=$(echo "if ($t < $validate_best) $t else $validate_best" | bc)
done
"$bin" serve --workspace "$work/ws" --listen 127.0.0.1:0 >"$work/serve.out" 2>&1 &
serve_pid=$!
until grep -q "Ctrl-C stops it." "$work/serve.out"; do sleep 0.1; done
python3 - "$work" "$csv" "$validate_best" "$serve_pid" <<'PY'
import re, subprocess, sys, time
sys.path.insert(0, "benches")
from console_session import Session, cpu
work, csv, validate, pid = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
person = Session(f"{work}/serve.out")
base, cookie, csrf, call = person.base, person.cookie, person.csrf, person.call
located = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", "-b", cookie,
    "-F", f"csrf={csrf}", "-F", "name=check", "-F", f"campaign_file=@{work}/campaign.toml",
    "-F", f"recipients=@{csv};filename=recipients.csv", base + "/campaigns"], capture_output=True, text=True).stdout
cid = located.rstrip("/").split("/campaigns/")[1].split("/")[0]
start = time.monotonic()
status, _, _ = call(f"/campaigns/{cid}/check", {"csrf": csrf})
status, _, page = call(f"/campaigns/{cid}/check")
check = time.monotonic() - start
assert status == 200 and "rows " in page, page[:500]
rows = re.search(r"rows (\d+) = valid", page).group(1)
print(f"rows {rows}: validate {validate:.2f} s, console check page {check:.2f} s, ratio {check / validate:.2f} (target <= 2.00)")
time.sleep(5)  # the check's own tail (its records flushed) is not idleness
before = cpu(pid); time.sleep(30); after = cpu(pid)
print(f"idle console: {after - before:.2f} s CPU over 30 s (target: 0.00; one tick is 0.01 s)")
PY
