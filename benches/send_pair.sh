#!/usr/bin/env bash
# Client CPU per recipient of `msgbatch run`, two builds alternated against one sandbox process:
# the cost of a change on the send path (the spend cap and live control were held to ≤ 5 %).
#
#   bash benches/send_pair.sh OLD_BINARY NEW_BINARY [ROWS=1000000] [PAIRS=4]
#
# Both send the same realistic rows (made by benches/scale.sh) with `[prices]` in the campaign; a
# binary that knows `--budget` runs with a budget (far above the estimate), so that every chunk is
# reserved and settled. Prints each run's user+sys CPU per recipient, then the median of each side
# and their ratio. Needs /usr/bin/time (GNU time) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
rows=${3:-1000000}
pairs=${4:-4}
dir=${SCALE_DIR:-/tmp/msgbatch-scale}
csv="$dir/recipients-realistic-$rows.csv"
[ -f "$csv" ] || bash benches/scale.sh "$rows" data >/dev/null

log="$dir/pair-sandbox.log"
"$new" sandbox --listen 127.0.0.1:0 2>"$log" &
sandbox=$!
trap 'kill $sandbox 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q '^sandbox listening on' "$log" && break; sleep 0.1; done
addr=$(sed -n 's|^sandbox listening on http://||p' "$log")

cat >"$dir/pair.toml" <<TOML
name = "pair"
kind = "sms"
endpoint = { base_url = "http://$addr/standard", gateway_url = "http://$addr/gateway" }
[credentials]
group_id = "demo"
[message]
service = 3001
text = "[데모몰] #{이름}님, 쿠폰 #{VAR1}이 도착했어요. #{VAR2}까지 사용 가능합니다."
callback_no = "0212345678"
[recipients]
path = "$csv"
phone = "hp"
name = "name"
variables = { VAR1 = "VAR1", VAR2 = "VAR2" }
[send]
chunk_size = 100
concurrency = 8
[prices]
sms = 9
lms = 30
TOML

one() { # label binary
    local extra=()
    if "$2" run --help | grep -q -- '--budget'; then extra=(--budget 1000000000000); fi
    rm -rf "$dir/pair-run"
    MSGBATCH_API_KEY=sbx-demo-key /usr/bin/time -f "%U %S %e" -o "$dir/pair-time" \
        "$2" run "$dir/pair.toml" --out "$dir/pair-run" --json "${extra[@]}" >/dev/null 2>&1 || true
    read -r user sys wall <"$dir/pair-time"
    python3 -c "import sys; u,s,w,n=map(float,sys.argv[1:5]); print(f'{sys.argv[5]:4} cpu/recipient={(u+s)/n*1e6:6.3f}us wall={w:6.2f}s')" \
        "$user" "$sys" "$wall" "$rows" "$1" | tee -a "$dir/pair-results"
}

rm -f "$dir/pair-results"
for _ in $(seq 1 "$pairs"); do
    one old "$old"
    one new "$new"
done
python3 - "$dir/pair-results" <<'PY'
import statistics, sys
runs = {"old": [], "new": []}
for line in open(sys.argv[1]):
    label = line.split()[0]
    cpu = float(line.split("cpu/recipient=")[1].split("us")[0])
    runs[label].append(cpu)
old, new = statistics.median(runs["old"]), statistics.median(runs["new"])
print(f"median cpu/recipient: old {old:.3f} us, new {new:.3f} us, new/old {new / old:.3f}")
PY
