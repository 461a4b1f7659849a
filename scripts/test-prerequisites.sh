#!/usr/bin/env bash
# The programs the test suite runs besides Node, each with the Debian/Ubuntu package that has it
# (README, "The two commands"). `npm test` runs this first (the `pretest` script):
#   --check    print one message naming every missing package and exit 1 (exit 0 when none is);
#   --install  install the missing packages with apt-get (as root; .ci/run, and `npm test` when
#              root with CI set).
# A reachable Docker engine stands in for the database and queue servers (libs/devservers starts
# them as containers then), so only the other programs are required in that case.
# AGENTLOOP_SKIP_PREREQUISITES=1 skips the check (e.g. to run the unit tests on a bare machine).
set -euo pipefail

mode=${1:---check}
[ "${AGENTLOOP_SKIP_PREREQUISITES:-}" = 1 ] && [ "$mode" = --check ] && exit 0

has() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
docker_reachable() { [ -n "${DOCKER_HOST:-}" ] || [ -S /var/run/docker.sock ]; }

missing=()
if ! docker_reachable || [ "$mode" = --install ]; then
  has nats-server || missing+=(nats-server)
  has redis-server || missing+=(redis-server)
  has mariadbd || missing+=(mariadb-server)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
fi
has tmux || missing+=(tmux)                           # the CLI's terminal test (tests/e2e/cli.test.ts)
has bwrap || missing+=(bubblewrap)                    # the code sandbox (libs/sandbox)
has chromium || has chromium-browser || missing+=(chromium) # the console's browser test (playwright-core)

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$mode" = --install ] || { [ "$(id -u)" = 0 ] && [ -n "${CI:-}" ]; }; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
  # Debian's packages start their services through invoke-rc.d; the tests start their own.
  for svc in nats-server redis-server mariadbd postgres; do pkill -x "$svc" 2>/dev/null || true; done
  exit 0
fi

cat >&2 <<MSG
The test suite needs programs that are not installed: ${missing[*]}
Install them (Debian/Ubuntu):
  sudo apt-get install -y ${missing[*]}
or run 'bash .ci/run', which installs them as root. With a Docker engine running, the NATS, Redis,
MariaDB and PostgreSQL servers are started as containers instead.
(AGENTLOOP_SKIP_PREREQUISITES=1 npm test skips this check; the tests needing them then fail.)
MSG
exit 1
