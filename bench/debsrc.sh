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

# fetch_source NAME PKG DIR FILE...: prints the newest DIR/PKG-<version> tree that has
# every FILE, after `apt-get source PKG` in DIR when there is none; exits with a message
# naming NAME when the package gives no such tree. Messages go to stderr, so that the
# caller can take the path with $(...).
fetch_source() {
  _fs_name=$1 _fs_pkg=$2 _fs_dir=$3
  shift 3
  _fs_tree=$(find "$_fs_dir" -maxdepth 1 -type d -name "$_fs_pkg-[0-9]*" | sort | tail -n 1)
  if ! tree_has "$_fs_tree" "$@"; then
    echo "$_fs_name: apt-get source $_fs_pkg (into $_fs_dir)" >&2
    # as root apt-get prints a harmless warning about the _apt user's sandbox
    if ! (cd "$_fs_dir" && apt-get source -qq "$_fs_pkg" >&2); then
      # The newest version's files can be missing from the mirror (a security
      # update's tarballs answered 404 here): the other versions it lists, newest first.
      for _fs_v in $(apt-cache showsrc "$_fs_pkg" | sed -n 's/^Version: //p' | sort -ruV); do
        echo "$_fs_name: apt-get source $_fs_pkg=$_fs_v" >&2
        if (cd "$_fs_dir" && apt-get source -qq --only-source "$_fs_pkg=$_fs_v" >&2); then
          break
        fi
      done
    fi
    _fs_tree=$(find "$_fs_dir" -maxdepth 1 -type d -name "$_fs_pkg-[0-9]*" | sort | tail -n 1)
  fi
  if ! tree_has "$_fs_tree" "$@"; then
    echo "$_fs_name: apt-get source $_fs_pkg gave no tree with $*" >&2
    exit 1
  fi
  echo "$_fs_tree"
}

# tree_has TREE FILE...: whether TREE is a directory holding every FILE.
tree_has() {
  [ -n "$1" ] || return 1
  _th_tree=$1
  shift
  for _th_f in "$@"; do
    [ -f "$_th_tree/$_th_f" ] || return 1
  done
}
