# Sourced by the install-*.sh scripts: the one "install into target/ once" rule. After
# `install_once <dir> <marker>` the caller holds an exclusive lock (target/<dir name>.lock,
# released when the script exits) and <dir> is empty and absent; when <marker> already
# exists (checked before and after taking the lock, so concurrent runs install once) the
# script exits 0 here. The caller installs into <dir> and touches <marker> last.
install_once() {
  local dir="$1" marker="$2"
  [ -f "$marker" ] && exit 0
  mkdir -p "$(dirname "$dir")"
  exec 9>"$dir.lock"
  flock 9
  [ -f "$marker" ] && exit 0
  rm -rf "$dir"
}
