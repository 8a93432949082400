#!/usr/bin/env bash
# A tour of msgbatch against its embedded sandbox: builds the binary, starts the sandbox with the
# built-in demo account on a free loopback port, and walks the management commands. No account,
# no network. Run from anywhere: `bash samples/tour.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet
bin=target/release/msgbatch
log=$(mktemp)
"$bin" sandbox --listen 127.0.0.1:0 --settle-after 2s 2>"$log" &
sandbox_pid=$!
trap 'kill "$sandbox_pid" 2>/dev/null; rm -f "$log"' EXIT

# The sandbox prints its address once it listens.
for _ in $(seq 1 100); do
    grep -q '^sandbox listening on' "$log" && break
    sleep 0.1
done
addr=$(sed -n 's|^sandbox listening on http://||p' "$log")
[ -n "$addr" ] || { echo "the sandbox did not start:"; cat "$log"; exit 1; }

export MSGBATCH_API_KEY=sbx-demo-key MSGBATCH_GROUP_ID=demo
export MSGBATCH_BASE_URL="http://$addr/standard" MSGBATCH_GATEWAY_URL="http://$addr/gateway"
step() { printf '\n$ msgbatch %s\n' "$*"; "$bin" "$@"; }

echo "sandbox at http://$addr (demo group 'demo')"
step category
step channel list
step sender token --phone 010-2000-1234 --yellow-id _tourShop
# The sandbox "sends" the token by SMS: it appears in its log.
token=$(sed -n 's/.*verification token \([0-9]*\) sent by SMS.*/\1/p' "$log" | tail -n 1)
step sender issue --token "$token" --phone 010-2000-1234 --yellow-id _tourShop --category 00200020001
step sender status 0f1e2d3c4b5a69788796a5b4c3d2e1f001234567
step channel create --name "Tour Shop" --sender-key 0f1e2d3c4b5a69788796a5b4c3d2e1f001234567 --callback-no 0212345678
channel_id=$("$bin" channel list --json | sed -n 's/.*"id": "\(ch-[0-9a-f]\{16\}\)".*/\1/p' | head -n 1)
step channel update "$channel_id" --name "Tour Shop (renamed)"
step channel delete "$channel_id"
step channel list --status DELETED
echo
echo "tour done: the sandbox stops now."
