#!/bin/sh
# memnode plugin hook: hook.sh EVENT runs `memnode-hook hook claude-code EVENT` with Claude
# Code's payload on stdin. It never blocks the session: without memnode it says once, at
# session start, how to get it, and exits 0.
. "$(dirname "$0")/find.sh"
event=$1
# `memnode install claude-code` writes the same hooks into a settings file: while those are
# there they record the session, and the plugin's stay quiet (no doubled events).
for f in "$HOME/.claude/settings.json" "${CLAUDE_PROJECT_DIR:-.}/.claude/settings.json" "${CLAUDE_PROJECT_DIR:-.}/.claude/settings.local.json"; do
  if [ -f "$f" ] && grep -q 'hook claude-code ' "$f" 2>/dev/null; then
    cat >/dev/null
    exit 0
  fi
done
if ! bin=$(memnode_find memnode-hook); then
  cat >/dev/null
  if [ "$event" = context ]; then
    printf '{"systemMessage": "%s"}\n' "$memnode_missing"
  fi
  exit 0
fi
exec "$bin" hook claude-code "$event"
