#!/usr/bin/env bash
# Installs Debian's Chromium for the dashboard's browser test (test/e2e/dashboard-browser.test.ts,
# driven by playwright-core with executablePath /usr/bin/chromium) when it is missing.
# Needs root or passwordless sudo; does nothing when Chromium is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "ci-chromium: /usr/bin/chromium is missing; installing Debian's chromium package"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
