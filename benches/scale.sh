#!/usr/bin/env bash
# Measures validate and run at scale: generates N SMS recipients, runs `msgbatch validate` on them,
# then `msgbatch run` against a sandbox in a separate process (so the figures are the client's
# alone), and prints wall time, rows/s, client CPU per recipient and peak RSS.
#
#   bash benches/scale.sh 1000000            # validate + run at 1 M
#   bash benches/scale.sh 10000000 validate  # validate only at 10 M
#   bash benches/scale.sh 1000000 all 1000   # chunks of 1,000 instead of 100
#
# Needs /usr/bin/time (GNU time) and python3. Files go to ${SCALE_DIR:-/tmp/msgbatch-scale}.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
what=${2:-all}
chunk=${3:-100}
dir=${SCALE_DIR:-/tmp/msgbatch-scale}
mkdir -p "$dir"
cargo build --release --quiet
bin=$PWD/target/release/msgbatch

csv="$dir/recipients-$rows.csv"
if [ ! -f "$csv" ]; then
    python3 - "$rows" "$csv" <<'PY'
import sys
rows, path = int(sys.argv[1]), sys.argv[2]
names = ["김민수", "이서연", "박지훈", "최유진", "정하늘", "강도윤", "윤서준", "장민지"]
with open(path, "w", encoding="utf-8", buffering=1 << 20) as f:
    f.write("phone,name,coupon\n")
    for i in range(rows):
        # Distinct numbers whose last two digits stay below 90 (the sandbox's failure rules use 91-96).
        n = (i // 90) * 100 + i % 90
        f.write(f"010{10000000 + n:08d},{names[i % 8]},C{i % 1000:04d}\n")
PY
fi

cat > "$dir/campaign.toml" <<TOML
name = "scale"
kind = "sms"
endpoint = { base_url = "http://ADDR/standard", gateway_url = "http://ADDR/gateway" }
[credentials]
group_id = "demo"
[message]
service = 3001
text = "[데모몰] #{name}님 쿠폰 #{VAR1} 도착"
callback_no = "0212345678"
[recipients]
path = "$csv"
name = "name"
variables = { VAR1 = "coupon" }
[send]
chunk_size = $chunk
concurrency = 8
TOML

measure() { # label, command...
    local label=$1; shift
    local log="$dir/time-$label.log"
    /usr/bin/time -v "$@" >"$dir/out-$label.log" 2>"$log" || { tail -20 "$log"; exit 1; }
    local wall user sys rss
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
    user=$(sed -n 's/.*User time (seconds): //p' "$log")
    sys=$(sed -n 's/.*System time (seconds): //p' "$log")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
    python3 - "$label" "$rows" "$wall" "$user" "$sys" "$rss" <<'PY'
import sys
label, rows, wall, user, sys_, rss = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
parts = [float(p) for p in wall.split(":")]
seconds = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) == 3 else 0)
print(f"{label:9} rows={rows:>10,} wall={seconds:7.2f}s rows/s={rows/seconds:>12,.0f} "
      f"cpu={user+sys_:7.2f}s cpu/row={(user+sys_)/rows*1e6:6.2f}us peak_rss={rss/1024:7.1f}MB")
PY
}

measure validate "$bin" validate "$dir/campaign.toml" --rejects "$dir/rejects.csv" --json
[ "$what" = validate ] && exit 0

log="$dir/sandbox.log"
"$bin" sandbox --listen 127.0.0.1:0 2>"$log" &
sandbox=$!
trap 'kill $sandbox 2>/dev/null' EXIT
for _ in $(seq 1 100); do grep -q '^sandbox listening on' "$log" && break; sleep 0.1; done
addr=$(sed -n 's|^sandbox listening on http://||p' "$log")
sed -i "s|ADDR|$addr|g" "$dir/campaign.toml"
rm -rf "$dir/run"
MSGBATCH_API_KEY=sbx-demo-key measure run "$bin" run "$dir/campaign.toml" --out "$dir/run" --json
