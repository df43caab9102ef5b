#!/usr/bin/env bash
# Installs what the tests of every module need and a machine with only Go
# lacks: redis-server and PostgreSQL (the store adapters' tests start real
# ones; see internal/testservers), promtool (Prometheus's, from the
# prometheus package: pgmirror's alert rules are tested with it) and a C
# compiler with the C library's headers (cgo, which -race needs). Only what
# is missing is installed.
#
# Debian and Ubuntu: through apt-get, as root or with sudo. On Debian 12
# (bookworm) at the versions pinned below, the ones CI tests with; on another
# release, or once a pinned version has left the archive, at that release's
# own version, said in one line. Other systems: one line says what to
# install, and the script fails.
set -euo pipefail

# Debian 12 (bookworm) pins, from its main archive.
REDIS_VERSION=5:7.0.15-1~deb12u7
POSTGRES_MAJOR=15
POSTGRES_VERSION=15.18-0+deb12u1
GCC_VERSION=4:12.2.0-3
PROMETHEUS_VERSION=2.42.0+ds-5+deb12u1

need_redis=; need_postgres=; need_cc=; need_promtool=
command -v redis-server >/dev/null || need_redis=1
command -v promtool >/dev/null || need_promtool=1
# internal/testservers looks for initdb and postgres on PATH and under
# /usr/lib/postgresql/*/bin (where Debian and Ubuntu put them).
if ! { command -v initdb && command -v postgres; } >/dev/null &&
   ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
  need_postgres=1
fi
# -race needs cgo: a C compiler that can build against the C library.
cc=$(go env CC); cc=${cc:-gcc}
printf '#include <stdlib.h>\nint main(void){return 0;}\n' > "${TMPDIR:-/tmp}/cgo-check.$$.c"
"$cc" -o /dev/null "${TMPDIR:-/tmp}/cgo-check.$$.c" >/dev/null 2>&1 || need_cc=1
rm -f "${TMPDIR:-/tmp}/cgo-check.$$.c"

[ -z "$need_redis$need_postgres$need_cc$need_promtool" ] && exit 0

if ! command -v apt-get >/dev/null; then
  missing=()
  [ -n "$need_redis" ] && missing+=(redis-server)
  [ -n "$need_postgres" ] && missing+=("PostgreSQL (initdb, postgres)")
  [ -n "$need_cc" ] && missing+=("a C compiler for -race")
  [ -n "$need_promtool" ] && missing+=("promtool (Prometheus)")
  echo "the tests need ${missing[*]}: on macOS, brew install redis postgresql@15 prometheus (and xcode-select --install for the compiler); elsewhere, your system's packages" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "installing the tests' packages needs root or sudo" >&2; exit 1; }
  sudo=(sudo)
fi
. /etc/os-release
echo "installing the packages the tests need (${PRETTY_NAME:-this system})"
"${sudo[@]}" apt-get update -qq

# pkg NAME VERSION: NAME=VERSION when the archive still has that version,
# else NAME (the release's own version), said in one line.
pkg() {
  if [ "${VERSION_CODENAME:-}" != bookworm ]; then
    echo "note: $1 is pinned for Debian 12 (bookworm) only; installing ${PRETTY_NAME:-this system}'s version" >&2
  elif ! apt-cache madison "$1" | awk '{print $3}' | grep -qxF "$2"; then
    echo "note: $1 $2 has left the archive; installing its current version (update the pin in $0)" >&2
  else
    echo "$1=$2"
    return
  fi
  echo "$1"
}

packages=()
if [ -n "$need_redis" ]; then
  # redis-server needs the redis-tools of its own version.
  packages+=("$(pkg redis-server "$REDIS_VERSION")" "$(pkg redis-tools "$REDIS_VERSION")")
fi
if [ -n "$need_postgres" ]; then
  if [ "${VERSION_CODENAME:-}" = bookworm ]; then
    packages+=("$(pkg postgresql-$POSTGRES_MAJOR "$POSTGRES_VERSION")" "$(pkg postgresql-client-$POSTGRES_MAJOR "$POSTGRES_VERSION")")
  else
    packages+=(postgresql) # the release's default major version
  fi
fi
if [ -n "$need_promtool" ]; then
  packages+=("$(pkg prometheus "$PROMETHEUS_VERSION")")
fi
if [ -n "$need_cc" ]; then
  # libc6-dev must match the installed C library exactly.
  packages+=("$(pkg gcc "$GCC_VERSION")" "libc6-dev=$(dpkg-query -W -f='${Version}' libc6)")
fi
echo "apt-get install ${packages[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
