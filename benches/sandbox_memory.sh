#!/usr/bin/env bash
# What a rehearsal costs the sandbox: runs N SMS recipients (chunks of 1,000 by default) through
# `msgbatch run` against a sandbox in its own process, then prints the sandbox's resident memory
# (idle, peak and after the run, from /proc/PID/status), bytes per recipient, recipients per
# second of the run and of the sandbox's own CPU time.
#
#   bash benches/sandbox_memory.sh 1000000
#   bash benches/sandbox_memory.sh 2000000 100     # chunks of 100
#   KEEP=1 bash benches/sandbox_memory.sh 200000   # keep the CSV and run directory
#   MSGBATCH_BIN=/path/msgbatch SANDBOX_BIN=/other/msgbatch bash benches/sandbox_memory.sh 1000000
#                                                  # given binaries (no build); the sandbox from another
#
# Files go to ${SANDBOX_MEMORY_DIR:-/tmp/msgbatch-sandbox-memory} and are deleted at the end
# (10 M recipients need ~0.3 GB for the CSV and ~0.2 GB for the run directory).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
chunk=${2:-1000}
dir=${SANDBOX_MEMORY_DIR:-/tmp/msgbatch-sandbox-memory}
bin=${MSGBATCH_BIN:-$PWD/target/release/msgbatch}
[ -n "${MSGBATCH_BIN:-}" ] || cargo build --release --quiet
sandbox_bin=${SANDBOX_BIN:-$bin}
mkdir -p "$dir"

# benches/scale.sh writes the recipients (distinct numbers that match no outcome rule of the demo
# accounts, so every recipient is charged) and the campaign file, then validates them.
SCALE_DIR=$dir bash benches/scale.sh "$rows" validate "$chunk" >/dev/null

log="$dir/sandbox.log"
"$sandbox_bin" sandbox --listen 127.0.0.1:0 2>"$log" &
sandbox=$!
cleanup() {
    kill "$sandbox" 2>/dev/null || true
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 1 600); do grep -q '^sandbox listening on' "$log" && break; sleep 0.1; done
addr=$(sed -n 's|^sandbox listening on http://||p' "$log")

sed -i "s|ADDR|$addr|g" "$dir/campaign.toml"

kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$sandbox/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$sandbox/stat"; }
idle_kib=$(kib VmRSS)
cpu_before=$(cpu_ticks)
rm -rf "$dir/run"
start=$(date +%s.%N)
MSGBATCH_API_KEY=sbx-demo-key "$bin" run "$dir/campaign.toml" --out "$dir/run" --json >"$dir/run.json" 2>"$dir/run.log" \
    || { tail -20 "$dir/run.log"; exit 1; }
end=$(date +%s.%N)
peak_kib=$(kib VmHWM)
after_kib=$(kib VmRSS)
cpu_after=$(cpu_ticks)
ticks=$(getconf CLK_TCK)

python3 - "$rows" "$chunk" "$idle_kib" "$peak_kib" "$after_kib" "$start" "$end" "$cpu_before" "$cpu_after" "$ticks" <<'PY'
import sys
rows, chunk, idle, peak, after = (int(v) for v in sys.argv[1:6])
start, end = float(sys.argv[6]), float(sys.argv[7])
cpu = (int(sys.argv[9]) - int(sys.argv[8])) / int(sys.argv[10])
wall = end - start
print(f"sandbox after {rows:,} SMS recipients (chunks of {chunk:,}): "
      f"idle {idle / 1024:.1f} MB, peak {peak / 1024:.1f} MB, after {after / 1024:.1f} MB resident; "
      f"{(peak - idle) * 1024 / rows:.1f} bytes/recipient at peak, {(after - idle) * 1024 / rows:.1f} after; "
      f"run {wall:.1f} s = {rows / wall:,.0f} recipients/s; "
      f"sandbox CPU {cpu:.1f} s = {rows / cpu if cpu else float('inf'):,.0f} recipients per CPU-second")
PY
