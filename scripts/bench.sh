#!/usr/bin/env bash
# The speed benchmark (crates/wificc-core/benches/sim.rs) built as `make build` builds the
# simulator: the release profile and, when target/pgo/wificc.profdata exists (scripts/pgo.sh)
# and PGO is not 0, its profile. `cargo bench` would compile with the bench profile, which names
# the crates apart from the release build (another -C metadata), so a profile taken from
# release code would match none of its functions.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PROFILE="$ROOT/target/pgo/wificc.profdata"
if [ "${PGO:-1}" = 1 ] && [ -f "$PROFILE" ]; then
    export RUSTFLAGS="-Cprofile-use=$PROFILE"
    echo "bench: profile-guided build ($PROFILE)" >&2
else
    echo "bench: build without PGO" >&2
fi
exe="$(cargo build --release -q --bench sim --message-format=json --manifest-path "$ROOT/Cargo.toml" |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "sim":
        print(m["executable"])')"
"$exe" --bench
