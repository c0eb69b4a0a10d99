#!/usr/bin/env bash
# System packages some tests use, from Debian's apt, where this user may install them: as root, or
# with sudo that asks no password. Anyone else gets a line saying what is missing and what it costs
# (never a failure: a contributor who is not root runs CI too).
#   - chromium: tests/html_page_test.ts opens the --html page in a real headless browser (skipped
#     without /usr/bin/chromium). About 30 s: apt-get update + 115 packages.
#   - ripgrep: pi's own grep tool, which the pi port runs for the scenario vectors' grep steps (pi
#     would otherwise try to download it).
# Exit status: 0 when everything wanted is there or was installed, 1 when an install failed.
set -uo pipefail

want=()
[ -x /usr/bin/chromium ] || want+=(chromium)
command -v rg >/dev/null 2>&1 || want+=(ripgrep)
[ ${#want[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "not installed (no apt-get here): ${want[*]}; install them with your package manager"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "not installed (apt-get needs root, and sudo asks a password): ${want[*]}"
  for p in "${want[@]}"; do
    case "$p" in
      chromium) echo "  without chromium the --html page test is skipped" ;;
      ripgrep) echo "  without ripgrep pi's grep tool cannot run: install it (sudo apt-get install ripgrep)" ;;
    esac
  done
  exit 0
fi
"${as_root[@]}" apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${want[@]}" >/dev/null
