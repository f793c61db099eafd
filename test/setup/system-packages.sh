#!/usr/bin/env bash
# Installs the Debian packages the suite needs when they are missing (listed in
# system-packages.txt). Fails loudly, never skips silently: a test that needs PostgreSQL or SIPp
# must run against the real thing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
missing=()
while read -r check package; do
  [[ -z "${check}" || "${check}" == \#* ]] && continue
  if [[ "${check}" == /* ]]; then
    # shellcheck disable=SC2086
    compgen -G ${check} >/dev/null && continue
  else
    command -v "${check}" >/dev/null 2>&1 && continue
  fi
  missing+=("${package}")
done < "${here}/system-packages.txt"

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "system packages: all present"
  exit 0
fi
echo "system packages: installing ${missing[*]}"
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "error: the test suite needs these Debian packages: ${missing[*]}" >&2
    echo "       install them (apt-get install ${missing[*]}) or run the tests as root" >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
if ! ${SUDO} apt-get update -qq || ! ${SUDO} apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
  echo "error: could not install ${missing[*]} with apt-get; the suite cannot run without them" >&2
  exit 1
fi
echo "system packages: installed ${missing[*]}"
