#!/usr/bin/env bash
# Regenerates libs/proto/src/gen from proto/ with protobuf-es (buf + protoc-gen-es
# from node_modules, no network). With --check, fails when the committed code is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
if [[ "${1:-}" == "--check" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  buf generate --template '{"version":"v2","plugins":[{"local":"protoc-gen-es","out":"'"$tmp"'","opt":["target=ts","import_extension=js"]}]}'
  if ! diff -r "$tmp" libs/proto/src/gen >/dev/null; then
    diff -r "$tmp" libs/proto/src/gen | head -40
    echo "generated protobuf code is stale: run 'npm run proto' and commit the result" >&2
    exit 1
  fi
  echo "protobuf code is up to date"
else
  rm -rf libs/proto/src/gen
  buf generate
  echo "generated libs/proto/src/gen"
fi
