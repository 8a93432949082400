#!/usr/bin/env bash
# `msgbatch validate` against the same work written with polars (benches/validate_polars.py), on
# benches/scale.sh's realistic rows: the two run in turn, ROUNDS times, and the script prints each
# run's wall time, CPU and peak memory, the fastest of each side and their ratio. It checks that
# both count the same rows valid, rejected and repeated, so the two did the same work.
#
#   bash benches/validate_polars.sh [ROWS] [ROUNDS]     # default 10000000 3
#   BIN=path/to/msgbatch bash benches/validate_polars.sh # another build (default target/release)
#
# Needs /usr/bin/time (GNU time) and python3 with polars (`pip install polars`); PYTHON names
# another interpreter. Files go to ${SCALE_DIR:-/tmp/msgbatch-scale}, made by benches/scale.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-10000000}
rounds=${2:-3}
bin=${BIN:-target/release/msgbatch}
python=${PYTHON:-python3}
dir=${SCALE_DIR:-/tmp/msgbatch-scale}
[ -x "$bin" ] || cargo build --release
SCALE_DIR=$dir bash benches/scale.sh "$rows" data >/dev/null
csv="$dir/recipients-realistic-$rows.csv"
campaign="$dir/campaign-polars-$rows.toml"
sed "s|^path = .*|path = \"$csv\"|" "$dir/campaign.toml" >"$campaign"
"$python" -c "import polars" 2>/dev/null || { echo "polars is not installed for $python: pip install polars" >&2; exit 1; }
for round in $(seq "$rounds"); do
    /usr/bin/time -f "msgbatch %e %U %S %M" "$bin" validate "$campaign" --rejects "$dir/rejects-msgbatch.csv" --json \
        >"$dir/figures-msgbatch.json" 2>>"$dir/times-$$.log"
    /usr/bin/time -f "polars %e %U %S %M" "$python" benches/validate_polars.py "$csv" "$dir/rejects-polars.csv" \
        >"$dir/figures-polars.json" 2>>"$dir/times-$$.log"
done
"$python" - "$dir/times-$$.log" "$dir/figures-msgbatch.json" "$dir/figures-polars.json" <<'PY'
import json, sys
best = {}
for line in open(sys.argv[1]):
    side, wall, user, system, rss = line.split()
    wall, cpu, mb = float(wall), float(user) + float(system), int(rss) / 1024
    print(f"{side:9} wall={wall:6.2f}s cpu={cpu:6.2f}s peak_rss={mb:8.1f}MB")
    best[side] = min(best.get(side, wall), wall)
ours, theirs = (json.load(open(path)) for path in sys.argv[2:4])
for key in ("rows", "valid", "rejected", "duplicates"):
    if ours[key] != theirs[key]:
        sys.exit(f"the two disagree on {key}: msgbatch {ours[key]}, polars {theirs[key]}")
print(f"fastest   msgbatch {best['msgbatch']:.2f}s, polars {best['polars']:.2f}s: "
      f"{best['polars'] / best['msgbatch']:.1f}x (same figures: {ours['valid']:,} valid, "
      f"{ours['rejected']:,} rejected, {ours['duplicates']:,} repeated)")
PY
rm -f "$dir/times-$$.log"
