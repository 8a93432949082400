#!/usr/bin/env bash
# Measures validate and run at scale: generates N recipients, runs `msgbatch validate` on them (as
# UTF-8 CSV, as a CP949 copy and as Parquet, beside the floor: the time to read the file), then
# `msgbatch run` against a sandbox in a separate process (so the figures are the client's alone),
# and `msgbatch report`; prints wall time, rows/s, CPU per row and peak RSS.
#
#   bash benches/scale.sh 1000000            # validate + run + report at 1 M
#   bash benches/scale.sh 10000000 validate  # validate only at 10 M
#   bash benches/scale.sh 1000000 all 1000   # chunks of 1,000 instead of 100
#   bash benches/scale.sh 10000000 data      # only make the files
#   SHAPE=simple bash benches/scale.sh ...   # the old rows: one phone spelling, ASCII coupon, ~28 bytes
#
# Realistic rows (the default) look like a campaign list: columns hp,name,VAR1,VAR2; Hangul names of
# three syllables; a coupon code and a date as variables; phone spellings mixed (60 % 01012345678,
# 30 % 010-1234-5678, 9 % +82 10-1234-5678, 1 % landlines, which are rejected); about 3 % repeated
# numbers; about 41 bytes a row. The message is a Korean SMS of about 75 EUC-KR bytes with #{이름},
# #{VAR1} and #{VAR2}.
#
# Needs /usr/bin/time (GNU time), python3 (with pyarrow for the Parquet copy; skipped without it).
# Files go to ${SCALE_DIR:-/tmp/msgbatch-scale}.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
what=${2:-all}
chunk=${3:-100}
shape=${SHAPE:-realistic}
dir=${SCALE_DIR:-/tmp/msgbatch-scale}
mkdir -p "$dir"
csv="$dir/recipients-$shape-$rows.csv"
if [ ! -f "$csv" ]; then
    python3 - "$rows" "$csv" "$shape" <<'PY'
import random, sys
rows, path, shape = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random(20261122)

def mobile(i):
    # Distinct numbers whose last two digits stay below 90 (the sandbox's failure rules use 91-96).
    n = (i // 90) * 100 + i % 90
    return f"{10000000 + n:08d}"

with open(path, "w", encoding="utf-8", buffering=1 << 20) as f:
    if shape == "simple":
        names = ["김민수", "이서연", "박지훈", "최유진", "정하늘", "강도윤", "윤서준", "장민지"]
        f.write("phone,name,coupon\n")
        for i in range(rows):
            f.write(f"010{mobile(i)},{names[i % 8]},C{i % 1000:04d}\n")
        sys.exit(0)
    surnames = "김이박최정강조윤장임한오서신권황안송류홍"
    given = "민서지현우준도하윤수영진예은성재가연태희주원경나"
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    dates = [f"2026-12-{d:02d}" for d in range(1, 32)]
    f.write("hp,name,VAR1,VAR2\n")
    issued = 0
    for i in range(rows):
        roll = rng.random()
        if roll < 0.01:
            phone = f"02-{rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}"
        else:
            if roll < 0.04 and issued > 0:
                digits = mobile(rng.randrange(issued))
            else:
                digits = mobile(issued)
                issued += 1
            spelling = rng.random()
            if spelling < 0.60:
                phone = f"010{digits}"
            elif spelling < 0.90:
                phone = f"010-{digits[:4]}-{digits[4:]}"
            else:
                phone = f"+82 10-{digits[:4]}-{digits[4:]}"
        name = rng.choice(surnames) + rng.choice(given) + rng.choice(given)
        coupon = "".join(rng.choice(letters) for _ in range(6))
        f.write(f"{phone},{name},{coupon},{rng.choice(dates)}\n")
PY
fi
cp949="${csv%.csv}.cp949.csv"
if [ "$shape" = realistic ] && [ ! -f "$cp949" ]; then
    python3 - "$csv" "$cp949" <<'PY'
import sys
with open(sys.argv[1], encoding="utf-8") as src, open(sys.argv[2], "w", encoding="cp949") as dst:
    for line in src:
        dst.write(line)
PY
fi
parquet="${csv%.csv}.parquet"
if [ "$shape" = realistic ] && [ ! -f "$parquet" ] && python3 -c "import pyarrow" 2>/dev/null; then
    python3 - "$csv" "$parquet" <<'PY'
import sys
import pyarrow as pa, pyarrow.csv as pc, pyarrow.parquet as pq
columns = {c: pa.string() for c in ["hp", "name", "VAR1", "VAR2"]}
table = pc.read_csv(sys.argv[1], convert_options=pc.ConvertOptions(column_types=columns))
pq.write_table(table, sys.argv[2])
PY
fi

[ "$what" = data ] && { ls -l "$dir"; exit 0; }
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/msgbatch

if [ "$shape" = simple ]; then
    mapping='name = "name"
variables = { VAR1 = "coupon" }'
    text='[데모몰] #{name}님 쿠폰 #{VAR1} 도착'
else
    mapping='phone = "hp"
name = "name"
variables = { VAR1 = "VAR1", VAR2 = "VAR2" }'
    text='[데모몰] #{이름}님, 쿠폰 #{VAR1}이 도착했어요. #{VAR2}까지 사용 가능합니다.'
fi
write_campaign() { # file, recipients
    cat > "$1" <<TOML
name = "scale"
kind = "sms"
endpoint = { base_url = "http://ADDR/standard", gateway_url = "http://ADDR/gateway" }
[credentials]
group_id = "demo"
[message]
service = 3001
text = "$text"
callback_no = "0212345678"
[recipients]
path = "$2"
$mapping
[send]
chunk_size = $chunk
concurrency = 8
TOML
}
write_campaign "$dir/campaign.toml" "$csv"

measure() { # label, command...
    local label=$1; shift
    local log="$dir/time-$label.log"
    /usr/bin/time -v "$@" >"$dir/out-$label.log" 2>"$log" || { tail -20 "$log"; exit 1; }
    local wall user sys rss
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
    user=$(sed -n 's/.*User time (seconds): //p' "$log")
    sys=$(sed -n 's/.*System time (seconds): //p' "$log")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
    python3 - "$label" "$rows" "$wall" "$user" "$sys" "$rss" "$dir/walls" <<'PY'
import sys
label, rows, wall, user, sys_, rss = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
parts = [float(p) for p in wall.split(":")]
seconds = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) == 3 else 0)
open(sys.argv[7], "a").write(f"{label} {seconds}\n")
rate = f"{rows/seconds:>12,.0f}" if seconds > 0 else f"{'(< 0.01 s)':>12}"
print(f"{label:9} rows={rows:>10,} wall={seconds:7.2f}s rows/s={rate} "
      f"cpu={user+sys_:7.2f}s cpu/row={(user+sys_)/rows*1e6:6.2f}us peak_rss={rss/1024:7.1f}MB")
PY
}

rm -f "$dir/walls"
# The floor: reading the file from the page cache (warmed by a first read).
cat "$csv" >/dev/null
measure floor cat "$csv"
measure validate "$bin" validate "$dir/campaign.toml" --rejects "$dir/rejects.csv" --json
if [ -f "$cp949" ]; then
    write_campaign "$dir/campaign-cp949.toml" "$cp949"
    measure cp949 "$bin" validate "$dir/campaign-cp949.toml" --rejects "$dir/rejects-cp949.csv" --json
fi
if [ -f "$parquet" ]; then
    write_campaign "$dir/campaign-parquet.toml" "$parquet"
    measure parquet "$bin" validate "$dir/campaign-parquet.toml" --rejects "$dir/rejects-parquet.csv" --json
fi
python3 - "$dir/walls" <<'PY'
import sys
walls = dict(line.split() for line in open(sys.argv[1]))
floor = float(walls["floor"])
for label in ("validate", "cp949", "parquet"):
    if label in walls and floor == 0:
        print(f"{label:9} the floor is below the timer's 0.01 s: no ratio")
    elif label in walls:
        print(f"{label:9} {float(walls[label]) / floor:6.1f}x the floor ({floor:.2f}s to read the CSV)")
if "cp949" in walls:
    print(f"cp949     {float(walls['cp949']) / float(walls['validate']):6.2f}x the UTF-8 validate")
PY
[ "$what" = validate ] && exit 0

start_sandbox() { # [address]: starts a sandbox in its own process; sets sandbox and addr
    local log="$dir/sandbox.log"
    "$bin" sandbox --listen "${1:-127.0.0.1:0}" 2>"$log" &
    sandbox=$!
    for _ in $(seq 1 100); do grep -q '^sandbox listening on' "$log" && break; sleep 0.1; done
    addr=$(sed -n 's|^sandbox listening on http://||p' "$log")
}
trap 'kill ${sandbox:-} 2>/dev/null || true' EXIT
start_sandbox
if [ "$what" != resume ]; then
    sed "s|ADDR|$addr|g" "$dir/campaign.toml" >"$dir/campaign-run.toml"
    rm -rf "$dir/run"
    MSGBATCH_API_KEY=sbx-demo-key measure run "$bin" run "$dir/campaign-run.toml" --out "$dir/run" --json || true
    # CSV, Parquet and the summaries alone; with default flags (report.xlsx only when the rows
    # fit one sheet); then with report.xlsx forced, however many sheets it takes.
    measure report-no-xlsx "$bin" report "$dir/run" --no-xlsx --json
    measure report "$bin" report "$dir/run" --json
    measure report-xlsx "$bin" report "$dir/run" --xlsx --json
fi
[ "$what" = run ] && exit 0

# resume: a run killed (-9) at about half, then `resume` against a fresh sandbox; the time from
# starting the process to the first request reaching the sandbox (its sent total leaves 0, polled
# every 10 ms: the figure is at most 10 ms late).
# A campaign file of its own: the run above stays reportable (its campaign file is unchanged).
sed "s|ADDR|$addr|g" "$dir/campaign.toml" >"$dir/campaign-resume.toml"
rm -rf "$dir/run-killed"
MSGBATCH_API_KEY=sbx-demo-key "$bin" run "$dir/campaign-resume.toml" --out "$dir/run-killed" --json \
    >/dev/null 2>"$dir/run-killed.log" &
victim=$!
python3 - "$dir/run-killed/status.json" "$rows" <<'PY'
import json, sys, time
path, rows = sys.argv[1], int(sys.argv[2])
while True:
    try:
        status = json.load(open(path))
        if status.get("sent", 0) + status.get("sending", 0) >= rows // 2:
            break
    except (OSError, ValueError):
        pass
    time.sleep(0.05)
PY
kill -9 $victim
wait $victim 2>/dev/null || true
kill $sandbox
wait $sandbox 2>/dev/null || true
# The same address: the campaign (and so its fingerprint) names it.
start_sandbox "$addr"
python3 - "$bin" "$dir/run-killed" "http://$addr/_sandbox/sent" <<'PY'
import json, os, subprocess, sys, time, urllib.request
binary, run_dir, sent = sys.argv[1:4]
request = urllib.request.Request(sent, headers={"apikey": "sbx-demo-key", "groupid": "demo"})
start = time.monotonic()
env = dict(os.environ, MSGBATCH_API_KEY="sbx-demo-key")
process = subprocess.Popen([binary, "resume", run_dir, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
first = None
while first is None and process.poll() is None:
    try:
        if json.load(urllib.request.urlopen(request))["total"] > 0:
            first = time.monotonic() - start
    except Exception:
        pass
    time.sleep(0.01)
process.wait()
print(f"resume    first request {first:.2f}s after start" if first else "resume    sent nothing")
PY
