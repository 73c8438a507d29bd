# Sourced by hook.sh and mcp.sh: memnode_find NAME prints the path of memnode's NAME binary
# (memnode or memnode-hook): PATH (a release archive or `npm install -g memnode`, whose
# bin shims run the platform package's binary), then ~/.local/bin, then beside memnode.
memnode_find() {
  p=$(command -v "$1" 2>/dev/null) && { echo "$p"; return 0; }
  [ -x "$HOME/.local/bin/$1" ] && { echo "$HOME/.local/bin/$1"; return 0; }
  m=$(command -v memnode 2>/dev/null) && [ -x "$(dirname "$m")/$1" ] && { echo "$(dirname "$m")/$1"; return 0; }
  return 1
}
memnode_missing="memnode is not installed: npm install -g memnode (or a release archive: https://github.com/memnode/memnode#install)"
