#!/usr/bin/env bash
# Installs the Debian packages the suite needs when they are missing (listed in
# system-packages.txt). Fails loudly, never skips silently: a test that needs PostgreSQL or SIPp
# must run against the real thing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# --print-missing: name the missing packages and install nothing. SYSTEM_PACKAGES_ROOT prefixes
# every path (a test points it at an empty directory to see what a bare machine would be asked for).
root="${SYSTEM_PACKAGES_ROOT:-}"
missing=()
while read -r check package; do
  [[ -z "${check}" || "${check}" == \#* ]] && continue
  if [[ "${check}" != /* ]]; then
    # A bare name would be looked up on the PATH, where npm puts node_modules/.bin first.
    echo "error: system-packages.txt: \"${check}\" must be an absolute path (package ${package})" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  compgen -G "${root}"${check} >/dev/null && continue
  missing+=("${package}")
done < "${SYSTEM_PACKAGES_LIST:-${here}/system-packages.txt}"

if [[ "${1:-}" == "--print-missing" ]]; then
  echo "${missing[*]}"
  exit 0
fi
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
