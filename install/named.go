package install

import "fmt"

// NamedHooks is the shape of an agent whose hooks file maps hook names to the events each
// hook handles (Antigravity's hooks.json: {"memnode": {"PreToolUse": [{"matcher": "*",
// "hooks": [{"type": "command", "command": …, "timeout": 60}]}], "Stop": [{"type":
// "command", "command": …, "timeout": 60}]}}). memnode's hooks are the one entry named
// Name: install writes it whole, uninstall deletes it; every other name is the user's.
// A spec with a Matcher goes into a matcher group (tool events); one without is a bare
// handler (the agent ignores matchers on its other events).
type NamedHooks struct {
	Name string
}

// entry is memnode's whole named hook.
func (n *NamedHooks) entry(t Target, binary string) *object {
	o := newObject()
	for _, spec := range t.Hooks {
		h := fieldsObject([]Field{{"type", "command"}, {"command", hookCommand(binary, t.Platform, spec.Sub)}, {"timeout", spec.Timeout}})
		var v any = h
		if spec.Matcher != "" {
			g := newObject()
			g.set("matcher", spec.Matcher)
			g.set("hooks", []any{h})
			v = g
		}
		prev, _ := o.get(spec.Event)
		list, _ := prev.([]any)
		o.set(spec.Event, append(list, v))
	}
	return o
}

// installNamedHooks sets memnode's named hook, replacing an older one in place (its key
// keeps its position).
func installNamedHooks(doc *object, t Target, binary string) error {
	if v, ok := doc.get(t.Named.Name); ok {
		if _, isObj := v.(*object); !isObj {
			return fmt.Errorf("%q is not an object", t.Named.Name)
		}
	}
	doc.set(t.Named.Name, t.Named.entry(t, binary))
	return nil
}

// uninstallNamedHooks deletes memnode's named hook and returns how many handlers it held.
func uninstallNamedHooks(doc *object, t Target) int {
	v, ok := doc.get(t.Named.Name)
	if !ok {
		return 0
	}
	doc.del(t.Named.Name)
	n := 0
	if o, isObj := v.(*object); isObj {
		for _, k := range o.keys {
			list, _ := o.vals[k].([]any)
			n += len(list)
		}
	}
	return n
}
