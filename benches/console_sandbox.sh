# Sourced by the console benches: a sandbox in its own process on a free port (`sandbox_pid`,
# `addr`), logging to "$work/sandbox.log". Needs `bin` and `work`.
"$bin" sandbox --listen 127.0.0.1:0 2>"$work/sandbox.log" &
sandbox_pid=$!
for _ in $(seq 1 100); do grep -q '^sandbox listening on' "$work/sandbox.log" && break; sleep 0.1; done
addr=$(sed -n 's|^sandbox listening on http://||p' "$work/sandbox.log")
