#!/bin/sh
# memnode plugin MCP server: `memnode mcp` on stdio.
. "$(dirname "$0")/find.sh"
if ! bin=$(memnode_find memnode); then
  echo "$memnode_missing" >&2
  exit 1
fi
exec "$bin" mcp
