package install

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// hookRef points at one hook entry of ours inside a settings document.
type hookRef struct {
	event   string
	matcher string
	entry   *object
	sub     string
}

// hooksObject returns doc.hooks, creating it (detached) when absent.
func hooksObject(doc *object) (*object, bool, error) {
	v, ok := doc.get("hooks")
	if !ok {
		return newObject(), false, nil
	}
	h, isObj := v.(*object)
	if !isObj {
		return nil, false, fmt.Errorf(`"hooks" is not an object`)
	}
	return h, true, nil
}

// groupsOf returns hooks.<event> as an array.
func groupsOf(hooks *object, event string) ([]any, error) {
	v, ok := hooks.get(event)
	if !ok {
		return nil, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, fmt.Errorf(`"hooks.%s" is not an array`, event)
	}
	return arr, nil
}

// collectOurs finds every hook entry of ours. Shapes memnode does not recognise are left
// alone rather than rejected: they belong to someone else.
func collectOurs(hooks *object, platform, binary string) ([]hookRef, error) {
	var refs []hookRef
	for _, event := range hooks.keys {
		groups, err := groupsOf(hooks, event)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			group, ok := g.(*object)
			if !ok {
				continue
			}
			matcher, _ := group.vals["matcher"].(string)
			entries, _ := group.vals["hooks"].([]any)
			for _, e := range entries {
				entry, ok := e.(*object)
				if !ok {
					continue
				}
				cmd, _ := entry.vals["command"].(string)
				if sub, ok := ourSubcommand(cmd, platform, binary); ok {
					refs = append(refs, hookRef{event: event, matcher: matcher, entry: entry, sub: sub})
				}
			}
		}
	}
	return refs, nil
}

// removeEntries drops the given entries, and the groups and event arrays that this removal
// leaves empty.
func removeEntries(hooks *object, drop map[*object]bool) {
	for _, event := range append([]string(nil), hooks.keys...) {
		groups, err := groupsOf(hooks, event)
		if err != nil || len(groups) == 0 {
			continue
		}
		keptGroups := make([]any, 0, len(groups))
		changed := false
		for _, g := range groups {
			group, ok := g.(*object)
			if !ok {
				keptGroups = append(keptGroups, g)
				continue
			}
			entries, _ := group.vals["hooks"].([]any)
			kept := make([]any, 0, len(entries))
			for _, e := range entries {
				if entry, ok := e.(*object); ok && drop[entry] {
					continue
				}
				kept = append(kept, e)
			}
			if len(kept) == len(entries) {
				keptGroups = append(keptGroups, g)
				continue
			}
			changed = true
			if len(kept) > 0 {
				group.set("hooks", kept)
				keptGroups = append(keptGroups, group)
			}
		}
		if !changed {
			continue
		}
		if len(keptGroups) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, keptGroups)
		}
	}
}

// installHooks updates our entries in place (so a second run moves nothing), appends the
// missing ones, and drops stale ones (an old binary path, an event no longer used).
func installHooks(doc *object, t Target, binary string) error {
	hooks, present, err := hooksObject(doc)
	if err != nil {
		return err
	}
	refs, err := collectOurs(hooks, t.Platform, binary)
	if err != nil {
		return err
	}
	claimed := map[*object]bool{}
	var missing []HookSpec
	for _, spec := range t.Hooks {
		found := false
		for _, r := range refs {
			if claimed[r.entry] || r.event != spec.Event || r.sub != spec.Sub || r.matcher != spec.Matcher {
				continue
			}
			claimed[r.entry] = true
			r.entry.set("type", "command")
			r.entry.set("command", hookCommand(binary, t.Platform, spec.Sub))
			r.entry.set("timeout", json.Number(strconv.Itoa(spec.Timeout)))
			found = true
			break
		}
		if !found {
			missing = append(missing, spec)
		}
	}
	stale := map[*object]bool{}
	for _, r := range refs {
		if !claimed[r.entry] {
			stale[r.entry] = true
		}
	}
	removeEntries(hooks, stale)
	for _, spec := range missing {
		groups, err := groupsOf(hooks, spec.Event)
		if err != nil {
			return err
		}
		entry := newObject()
		entry.set("type", "command")
		entry.set("command", hookCommand(binary, t.Platform, spec.Sub))
		entry.set("timeout", json.Number(strconv.Itoa(spec.Timeout)))
		group := newObject()
		if spec.Matcher != "" {
			group.set("matcher", spec.Matcher)
		}
		group.set("hooks", []any{entry})
		hooks.set(spec.Event, append(groups, group))
	}
	if !present {
		doc.set("hooks", hooks)
	}
	return nil
}

// uninstallHooks removes all our entries and returns how many there were.
func uninstallHooks(doc *object, platform, binary string) (int, error) {
	hooks, present, err := hooksObject(doc)
	if err != nil || !present {
		return 0, err
	}
	refs, err := collectOurs(hooks, platform, binary)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	drop := map[*object]bool{}
	for _, r := range refs {
		drop[r.entry] = true
	}
	removeEntries(hooks, drop)
	if hooks.len() == 0 {
		doc.del("hooks")
	}
	return len(refs), nil
}

func mcpServers(doc *object, key string) (*object, bool, error) {
	v, ok := doc.get(key)
	if !ok {
		return newObject(), false, nil
	}
	s, isObj := v.(*object)
	if !isObj {
		return nil, false, fmt.Errorf("%q is not an object", key)
	}
	return s, true, nil
}

// installMCP registers memnode's MCP server entry want under doc.<key>.
func installMCP(doc *object, key string, want *object) error {
	servers, present, err := mcpServers(doc, key)
	if err != nil {
		return err
	}
	if cur, ok := servers.vals[MCPServerName].(*object); ok {
		a, _ := cur.MarshalJSON()
		b, _ := want.MarshalJSON()
		if string(a) == string(b) {
			return nil
		}
	}
	servers.set(MCPServerName, want)
	if !present {
		doc.set(key, servers)
	}
	return nil
}

// uninstallMCP removes the memnode server and reports whether it was there.
func uninstallMCP(doc *object, key string) (bool, error) {
	servers, present, err := mcpServers(doc, key)
	if err != nil || !present {
		return false, err
	}
	if _, ok := servers.get(MCPServerName); !ok {
		return false, nil
	}
	servers.del(MCPServerName)
	if servers.len() == 0 {
		doc.del(key)
	}
	return true, nil
}
