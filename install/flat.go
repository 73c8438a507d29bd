package install

import (
	"fmt"
)

// FlatHooks is the shape of an agent whose "hooks" object maps each event straight to a
// list of command entries, without Claude's matcher groups: Cursor ({"version": 1,
// "hooks": {"stop": [{"command": …, "timeout": 60}]}}) and Windsurf ({"hooks":
// {"post_run_command": [{"command": …, "show_output": false}]}}).
type FlatHooks struct {
	// CommandKey is the entry key holding the command; "" means "command".
	CommandKey string
	// Entry is memnode's entry for one hook whose command is cmd; nil means
	// {CommandKey: cmd, "timeout": spec.Timeout}.
	Entry func(cmd string, spec HookSpec) []Field
	// Top are top-level keys the agent requires ({"version": 1}), set when absent and
	// removed again on uninstall when nothing but them is left.
	Top []Field
}

func (f *FlatHooks) commandKey() string {
	if f.CommandKey == "" {
		return "command"
	}
	return f.CommandKey
}

func (f *FlatHooks) entry(cmd string, spec HookSpec) *object {
	if f.Entry == nil {
		return fieldsObject([]Field{{f.commandKey(), cmd}, {"timeout", spec.Timeout}})
	}
	return fieldsObject(f.Entry(cmd, spec))
}

// flatRef is one entry of ours in a flat hooks object.
type flatRef struct {
	event string
	entry *object
	sub   string
}

func collectFlat(hooks *object, f *FlatHooks, platform, binary string) ([]flatRef, error) {
	var refs []flatRef
	for _, event := range hooks.keys {
		entries, err := groupsOf(hooks, event)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			entry, ok := e.(*object)
			if !ok {
				continue
			}
			cmd, _ := entry.vals[f.commandKey()].(string)
			if sub, ok := ourSubcommand(cmd, platform, binary); ok {
				refs = append(refs, flatRef{event: event, entry: entry, sub: sub})
			}
		}
	}
	return refs, nil
}

// dropFlat removes the given entries and the event arrays this leaves empty.
func dropFlat(hooks *object, drop map[*object]bool) {
	for _, event := range append([]string(nil), hooks.keys...) {
		entries, err := groupsOf(hooks, event)
		if err != nil || len(entries) == 0 {
			continue
		}
		kept := make([]any, 0, len(entries))
		for _, e := range entries {
			if o, ok := e.(*object); ok && drop[o] {
				continue
			}
			kept = append(kept, e)
		}
		switch {
		case len(kept) == len(entries):
		case len(kept) == 0:
			hooks.del(event)
		default:
			hooks.set(event, kept)
		}
	}
}

// installFlatHooks updates our entries in place, appends missing ones and drops stale
// ones, as installHooks does for Claude-style groups.
func installFlatHooks(doc *object, t Target, binary string) error {
	f := t.Flat
	hooks, present, err := hooksObject(doc)
	if err != nil {
		return err
	}
	refs, err := collectFlat(hooks, f, t.Platform, binary)
	if err != nil {
		return err
	}
	claimed := map[*object]bool{}
	for _, spec := range t.Hooks {
		want := f.entry(hookCommand(binary, t.Platform, spec.Sub), spec)
		found := false
		for _, r := range refs {
			if claimed[r.entry] || r.event != spec.Event || r.sub != spec.Sub {
				continue
			}
			claimed[r.entry], found = true, true
			for _, k := range want.keys {
				r.entry.set(k, want.vals[k])
			}
			break
		}
		if found {
			continue
		}
		entries, err := groupsOf(hooks, spec.Event)
		if err != nil {
			return err
		}
		hooks.set(spec.Event, append(entries, want))
	}
	stale := map[*object]bool{}
	for _, r := range refs {
		if !claimed[r.entry] {
			stale[r.entry] = true
		}
	}
	dropFlat(hooks, stale)
	top := fieldsObject(f.Top)
	for _, k := range top.keys {
		if _, ok := doc.get(k); !ok {
			doc.set(k, top.vals[k])
		}
	}
	if !present {
		doc.set("hooks", hooks)
	}
	return nil
}

// uninstallFlatHooks removes all our entries and returns how many there were; a document
// left with nothing but the agent's required top-level keys (as memnode writes them) is
// emptied, so the file memnode created goes.
func uninstallFlatHooks(doc *object, t Target, binary string) (int, error) {
	hooks, present, err := hooksObject(doc)
	if err != nil || !present {
		return 0, err
	}
	refs, err := collectFlat(hooks, t.Flat, t.Platform, binary)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	drop := map[*object]bool{}
	for _, r := range refs {
		drop[r.entry] = true
	}
	dropFlat(hooks, drop)
	if hooks.len() == 0 {
		doc.del("hooks")
	}
	top := fieldsObject(t.Flat.Top)
	onlyTop := doc.len() == top.len()
	for _, k := range doc.keys {
		v, ok := top.vals[k]
		if !ok || fmt.Sprint(v) != fmt.Sprint(doc.vals[k]) {
			onlyTop = false
		}
	}
	if onlyTop {
		for _, k := range top.keys {
			doc.del(k)
		}
	}
	return len(refs), nil
}
