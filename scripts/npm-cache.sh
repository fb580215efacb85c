# scripts/npm-cache.sh: sourced by scripts that need npm packages pinned by a package-lock.json
# (tests/clients/run.sh, scripts/bundle-ui.sh).
#
# npm_ci_cached FOLDER NAME: installs FOLDER's package.json and package-lock.json with `npm ci` into
# a cache folder named after NAME and the lock's hash, unless an earlier run did, and prints that
# folder. A run that fails half-way leaves no folder that counts as installed.
npm_ci_cached() {
  local folder=$1 name=$2 lockhash cache
  lockhash=$(sha256sum "$folder/package-lock.json" | cut -c1-12)
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/askdesk-tests/$name-$lockhash"
  if [ ! -f "$cache/.installed" ]; then
    echo "==> installing the pinned $name packages into $cache" >&2
    rm -rf "$cache.partial"
    mkdir -p "$cache.partial"
    cp "$folder/package.json" "$folder/package-lock.json" "$cache.partial/"
    (cd "$cache.partial" && npm ci --no-audit --no-fund --loglevel=error) >&2 || return 1
    touch "$cache.partial/.installed"
    rm -rf "$cache"
    mv "$cache.partial" "$cache"
  fi
  printf '%s\n' "$cache"
}
