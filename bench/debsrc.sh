# debsrc.sh: sourced by the bench/get-*.sh scripts. Defines SUDO and
# ensure_deb_src NAME PKG: makes `apt-get source PKG` possible on a fresh Debian 12
# (which has no deb-src entry) by adding a deb-src stanza derived from the
# existing debian.sources (same archive and suites), then apt-get update. NAME prefixes
# the messages.
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

ensure_deb_src() {
  if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    src=/etc/apt/sources.list.d/debian.sources
    if [ ! -f "$src" ]; then
      echo "$1: no deb-src entry and no $src to derive one from;" >&2
      echo "  add a 'deb-src' line for Debian's archive to /etc/apt/sources.list" >&2
      exit 1
    fi
    echo "$1: adding a deb-src stanza (from $src) and running apt-get update"
    sed 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb-src/' "$src" \
      | $SUDO tee /etc/apt/sources.list.d/mtpc-deb-src.sources >/dev/null
    $SUDO apt-get update -qq
  elif ! apt-cache showsrc "$2" >/dev/null 2>&1; then
    $SUDO apt-get update -qq
  fi
}
