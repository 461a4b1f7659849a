#!/usr/bin/env bash
# Installs the skills toolbox (docs/skills-ecosystem.md "The toolbox") into DIR, the same way in
# the image (deploy/Dockerfile) and on a machine of your own:
#
#   DIR/python  a venv with deploy/skills-toolbox/requirements.txt (pypdf, openpyxl, python-docx, …)
#   DIR/node    node_modules with deploy/skills-toolbox/package.json (docx, pptxgenjs)
#
# then checks that every module and command the document skills call is there. Point AgentLoop at
# it with SKILLS_TOOLBOX=DIR: skill scripts and the code sandbox (python_analyser,
# run_bash_command) then run its Python, find `python`, `markitdown`… on PATH and its Node packages
# on NODE_PATH, mounted read-only.
#
#   --apt         first apt-get install the system tools (poppler-utils, qpdf, pandoc, LibreOffice
#                 headless, fonts) and Debian's builds of the Python packages (root, Debian/Ubuntu);
#                 on Debian 12 LibreOffice comes from bookworm-backports (see below)
#   --offline-ok  a registry that cannot be reached (pip or npm) is reported, not fatal: the venv
#                 sees Debian's python3-* packages (--system-site-packages), so an offline machine
#                 still gets most of the toolbox; the check lists what is missing
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
apt=false offline_ok=false dir=
for arg in "$@"; do
  case "$arg" in
    --apt) apt=true ;;
    --offline-ok) offline_ok=true ;;
    -*) echo "skills-toolbox: unknown option $arg" >&2; exit 2 ;;
    *) dir=$arg ;;
  esac
done
[[ -n $dir ]] || { echo "usage: $0 [--apt] [--offline-ok] DIR" >&2; exit 2; }

# System tools the skills' instructions call, and Debian's builds of the Python packages that have
# one (pip upgrades them inside the venv when PyPI is reachable).
APT_PACKAGES=(
  python3 python3-venv poppler-utils qpdf pandoc fonts-dejavu-core fonts-liberation
  python3-pypdf python3-pil python3-reportlab python3-openpyxl python3-pandas python3-docx python3-lxml python3-defusedxml
)
# Import name of each requirement, and the commands the instructions run.
PYTHON_MODULES=(pypdf pdfplumber pypdfium2 pdf2image PIL reportlab openpyxl pandas docx pptx lxml defusedxml markitdown)
NODE_MODULES=(docx pptxgenjs)
COMMANDS=(pdftotext pdftoppm pdfimages qpdf pandoc soffice)

if $apt; then
  export DEBIAN_FRONTEND=noninteractive
  # Debian 12's LibreOffice (7.4) never finishes a Basic macro run on an opened document, which is
  # how the xlsx skill's recalc.py and the docx skill's accept_changes.py work (it hangs, or aborts
  # in a sandbox); bookworm-backports' (25.2) runs them. Other releases: their own LibreOffice.
  lo_release=()
  if grep -q '^VERSION_CODENAME=bookworm$' /etc/os-release 2>/dev/null && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d; then
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      >/etc/apt/sources.list.d/bookworm-backports.sources
  fi
  grep -q '^VERSION_CODENAME=bookworm$' /etc/os-release 2>/dev/null && lo_release=(-t bookworm-backports)
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${APT_PACKAGES[@]}"
  apt-get install -y -q --no-install-recommends "${lo_release[@]}" libreoffice-nogui
fi

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
# Debian's own Python, not a version manager's shim: it is the one Debian's python3-* packages serve.
python=/usr/bin/python3
[[ -x $python ]] || python="$(command -v python3)"
if [[ ! -x $dir/python/bin/python3 ]]; then
  "$python" -m venv --system-site-packages "$dir/python"
fi
if ! "$dir/python/bin/pip" install --no-cache-dir --disable-pip-version-check --quiet --retries 1 --timeout 10 -r "$here/requirements.txt"; then
  $offline_ok || { echo "skills-toolbox: pip install failed" >&2; exit 1; }
  echo "skills-toolbox: pip could not install the requirements (offline?): continuing with what Debian provides" >&2
fi

mkdir -p "$dir/node"
cp "$here/package.json" "$dir/node/package.json"
if ! npm install --prefix "$dir/node" --omit=dev --no-audit --no-fund --loglevel=error >/dev/null; then
  $offline_ok || { echo "skills-toolbox: npm install failed" >&2; exit 1; }
  echo "skills-toolbox: npm could not install the Node packages (offline?)" >&2
fi

missing=()
for m in "${PYTHON_MODULES[@]}"; do
  "$dir/python/bin/python3" -c "import $m" 2>/dev/null || missing+=("python:$m")
done
for m in "${NODE_MODULES[@]}"; do
  NODE_PATH="$dir/node/node_modules" node -e "require('$m')" 2>/dev/null || missing+=("node:$m")
done
for c in "${COMMANDS[@]}"; do
  command -v "$c" >/dev/null || missing+=("command:$c")
done
echo "skills toolbox in $dir: ${#PYTHON_MODULES[@]} Python modules, ${#NODE_MODULES[@]} Node packages, ${#COMMANDS[@]} commands checked"
if ((${#missing[@]})); then
  echo "skills-toolbox: missing: ${missing[*]}" >&2
  $offline_ok || exit 1
fi
echo "use it with: SKILLS_TOOLBOX=$dir"
