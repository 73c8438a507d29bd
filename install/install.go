// Package install adds memnode's hooks and MCP server to an IDE's settings files, and
// removes exactly those again, leaving every other key and tool untouched.
package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/memnode/memnode/internal/atomicfile"
)

// Scopes of an installation.
const (
	ScopeUser    = "user"    // the agent's files in the home directory
	ScopeProject = "project" // the agent's files in the project directory
)

// MCPServerName is the name memnode's MCP server is registered under.
const MCPServerName = "memnode"

// Errors.
var (
	// ErrMalformed means an existing settings file is not what the agent writes; it is
	// left untouched.
	ErrMalformed = errors.New("malformed settings file")
	ErrBadOption = errors.New("bad install option")
)

// Options say where to install. No field is read from the environment here.
type Options struct {
	Scope      string // ScopeUser or ScopeProject
	HomeDir    string // for ScopeUser
	ProjectDir string // for ScopeProject
	// ConfigHome is the XDG base directory for user configuration ($XDG_CONFIG_HOME, made
	// absolute) for ScopeUser; empty means HomeDir/.config. Agents that keep their config
	// there (OpenCode) install below it.
	ConfigHome string
	// Binary is the memnode executable: an absolute path, or for ScopeProject a bare name
	// found in PATH.
	Binary string
	// HookBinary runs the hooks (`<HookBinary> hook <platform> <event>`); empty means
	// Binary. The CLI passes the lean memnode-hook binary when it sits beside memnode.
	HookBinary string
}

func (o Options) hookBinary() string {
	if o.HookBinary != "" {
		return o.HookBinary
	}
	return o.Binary
}

// UserConfigDir is the XDG config directory of ScopeUser: ConfigHome, or HomeDir/.config.
func (o Options) UserConfigDir() string {
	if o.ConfigHome != "" {
		return o.ConfigHome
	}
	return filepath.Join(o.HomeDir, ".config")
}

func (o Options) validate() error {
	switch {
	case o.Scope != ScopeUser && o.Scope != ScopeProject:
		return fmt.Errorf("%w: scope %q (want user or project)", ErrBadOption, o.Scope)
	case o.Scope == ScopeUser && !filepath.IsAbs(o.HomeDir):
		return fmt.Errorf("%w: home directory %q is not absolute", ErrBadOption, o.HomeDir)
	case o.Scope == ScopeUser && o.ConfigHome != "" && !filepath.IsAbs(o.ConfigHome):
		return fmt.Errorf("%w: config directory %q is not absolute", ErrBadOption, o.ConfigHome)
	case o.Scope == ScopeProject && !filepath.IsAbs(o.ProjectDir):
		return fmt.Errorf("%w: project directory %q is not absolute", ErrBadOption, o.ProjectDir)
	case o.Scope == ScopeUser && (!filepath.IsAbs(o.Binary) || !filepath.IsAbs(o.hookBinary())):
		return fmt.Errorf("%w: user scope needs absolute binary paths (%q, %q)", ErrBadOption, o.Binary, o.hookBinary())
	case !commandName(o.Binary):
		return fmt.Errorf("%w: memnode binary %q is neither absolute nor a bare name", ErrBadOption, o.Binary)
	case !commandName(o.hookBinary()):
		return fmt.Errorf("%w: hook binary %q is neither absolute nor a bare name", ErrBadOption, o.HookBinary)
	}
	return nil
}

// commandName reports whether s is an absolute path, or a bare command name looked up in
// PATH (what project scope writes, so the files a team commits hold no machine's paths).
func commandName(s string) bool {
	return filepath.IsAbs(s) || (s != "" && !strings.ContainsRune(s, filepath.Separator) && !strings.ContainsRune(s, '/'))
}

// Change is what happened to one file.
type Change struct {
	Path   string
	Action string // "created", "updated", "restored", "removed", "unchanged", "absent"
	Detail string
}

func (c Change) String() string {
	s := c.Action + " " + c.Path
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// HookSpec is one hook entry memnode installs in a Claude-style "hooks" object.
type HookSpec struct {
	Event   string // the agent's hook event
	Matcher string // "" means no matcher key
	Sub     string // memnode hook event
	Timeout int    // seconds
}

// Target is one agent's configuration files and what memnode adds to them: hook entries
// in a Claude-style "hooks" object ({event: [{matcher, hooks: [{type, command, timeout}]}]},
// the shape Claude Code, Qwen Code and Gemini CLI share) and a stdio server in "mcpServers".
type Target struct {
	// Platform is the agent's registered name, as in `<binary> hook <platform> <event>`.
	Platform string
	// Settings is the file holding "hooks" ("" for an agent without command hooks); MCP the
	// file holding the MCP servers ("" for an agent whose MCP config is not JSON: its
	// platform edits it itself, e.g. Codex's config.toml). They may be the same file
	// (Gemini CLI, Qwen Code).
	Settings, MCP string
	Hooks         []HookSpec
	// MCPKey is the top-level key of the MCP server map; "" means "mcpServers".
	MCPKey string
	// MCPEntry is memnode's server entry for the given memnode binary; nil means Claude
	// Code's {"type": "stdio", "command": binary, "args": ["mcp"]}.
	MCPEntry func(binary string) []Field
	// Flat, when set, says the hooks object maps events straight to command entries
	// (Cursor, Windsurf) instead of Claude-style matcher groups.
	Flat *FlatHooks
	// Named, when set, says the file maps hook names to their events and memnode's hooks
	// are one named entry (Antigravity).
	Named *NamedHooks
	// NewMode is the mode of files created (0600 for files in the home directory).
	NewMode fs.FileMode
	// AgentKeys are top-level keys the agent itself adds when it rewrites the file (Qwen
	// Code's "$version", written by its settings migration on every start): a difference in
	// them alone does not stop uninstall from giving back the original bytes, since the
	// agent writes them again.
	AgentKeys []string
}

// Field is one key of an MCP server entry, in the order written. Value is a string, bool,
// json.Number, []string, or a []Field (a nested object).
type Field struct {
	Key   string
	Value any
}

func (t Target) mcpKey() string {
	if t.MCPKey == "" {
		return "mcpServers"
	}
	return t.MCPKey
}

// mcpEntry builds memnode's server entry as a document value.
func (t Target) mcpEntry(binary string) *object {
	if t.MCPEntry == nil {
		return fieldsObject([]Field{{"type", "stdio"}, {"command", binary}, {"args", []string{"mcp"}}})
	}
	return fieldsObject(t.MCPEntry(binary))
}

func fieldsObject(fs []Field) *object {
	o := newObject()
	for _, f := range fs {
		switch v := f.Value.(type) {
		case []string:
			arr := make([]any, len(v))
			for i, s := range v {
				arr[i] = s
			}
			o.set(f.Key, arr)
		case []Field:
			o.set(f.Key, fieldsObject(v))
		case int:
			o.set(f.Key, json.Number(strconv.Itoa(v)))
		default:
			o.set(f.Key, v)
		}
	}
	return o
}

// file is one settings file read for editing.
type file struct {
	path    string // symlinks resolved: we rewrite the target, not the link
	exists  bool
	mode    fs.FileMode
	orig    []byte
	doc     *object
	style   style
	newMode fs.FileMode
	// agentKeys are Target.AgentKeys.
	agentKeys []string
}

func readFile(path string, newMode fs.FileMode) (*file, error) {
	f := &file{path: path, newMode: newMode, style: defaultStyle}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		f.path = real
	}
	fi, err := os.Stat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		f.doc = newObject()
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f.exists, f.mode, f.orig, f.style = true, fi.Mode().Perm(), b, styleOf(b)
	if len(bytes.TrimSpace(b)) == 0 {
		f.doc = newObject()
		return f, nil
	}
	doc, err := parseObject(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w (fix or move it, then run again)", ErrMalformed, path, err)
	}
	f.doc = doc
	return f, nil
}

// backupSuffix names the copy of a file as it was before memnode first changed it.
const backupSuffix = ".memnode-backup"

// same reports whether two documents are equal, key order included.
func same(a, b *object) bool {
	x, errX := a.MarshalJSON()
	y, errY := b.MarshalJSON()
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// withoutEmpty is o without its top-level empty objects and arrays: uninstall drops a
// "hooks" or "mcpServers" it emptied, which the original may have held empty.
func withoutEmpty(o *object) *object {
	out := newObject()
	for _, k := range o.keys {
		switch v := o.vals[k].(type) {
		case *object:
			if v.len() == 0 {
				continue
			}
		case []any:
			if len(v) == 0 {
				continue
			}
		}
		out.set(k, o.vals[k])
	}
	return out
}

// sameContent reports whether two documents hold the same content once the agent's own
// keys and top-level empty containers are left out: key order and formatting aside (an
// agent that rewrites the file may reorder it), what restoring one in place of the other
// would change is nothing.
func sameContent(a, b *object, agentKeys []string) bool {
	value := func(o *object) (any, bool) {
		o = withoutEmpty(o)
		for _, k := range agentKeys {
			o.del(k)
		}
		raw, err := o.MarshalJSON()
		if err != nil {
			return nil, false
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v) == nil
	}
	x, okX := value(a)
	y, okY := value(b)
	return okX && okY && reflect.DeepEqual(x, y)
}

// commit writes the document if it changed semantically and reports what it did. Install
// (create) keeps the file's bytes from before memnode's first change in a backup; uninstall
// puts exactly those bytes back when nothing else changed since, else writes the document
// without memnode's entries in the file's own formatting; either way the backup goes.
func (f *file) commit(detail string, create bool) (Change, error) {
	ch := Change{Path: f.path, Detail: detail}
	if !f.exists && !create {
		ch.Action = "absent"
		return ch, nil
	}
	backup := f.path + backupSuffix
	if !create {
		defer os.Remove(backup) // best effort: a backup left behind only holds the old bytes
	}
	if f.exists {
		unchanged := f.doc.len() == 0
		if len(bytes.TrimSpace(f.orig)) > 0 {
			before, err := parseObject(f.orig)
			unchanged = err == nil && same(before, f.doc)
		}
		if unchanged {
			ch.Action = "unchanged"
			return ch, nil
		}
	}
	mode := f.newMode
	if f.exists {
		mode = f.mode
	}
	if !create {
		if bak, err := os.ReadFile(backup); err == nil {
			if before, err := parseObject(bak); err == nil && sameContent(before, f.doc, f.agentKeys) {
				if err := writeAtomic(f.path, bak, mode); err != nil {
					return ch, err
				}
				ch.Action = "restored"
				return ch, nil
			}
		}
		if f.doc.len() == 0 {
			// Uninstall emptied a file that held only memnode's entries: remove it rather
			// than leave a "{}" behind (the agent treats both the same).
			if err := os.Remove(f.path); err != nil {
				return ch, fmt.Errorf("remove %s: %w", f.path, err)
			}
			ch.Action = "removed"
			return ch, nil
		}
	}
	out, err := encodeDoc(f.doc, f.style)
	if err != nil {
		return ch, fmt.Errorf("encode %s: %w", f.path, err)
	}
	if create && f.exists {
		// The bytes from before memnode's first change, kept until uninstall.
		if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
			if err := writeAtomic(backup, f.orig, mode); err != nil {
				return ch, err
			}
		}
	}
	if err := writeAtomic(f.path, out, mode); err != nil {
		return ch, err
	}
	ch.Action = "updated"
	if !f.exists {
		ch.Action = "created"
	}
	return ch, nil
}

// writeAtomic replaces name with data, with the given mode, creating its directory.
func writeAtomic(name string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return atomicfile.Write(name, data, mode)
}

// Install adds t's hooks and registers the MCP server. Running it again changes nothing.
// Both files are checked before either is written.
func Install(t Target, opts Options) ([]Change, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	settings, mcp, err := readBoth(t)
	if err != nil {
		return nil, err
	}
	install := installHooks
	switch {
	case t.Flat != nil:
		install = installFlatHooks
	case t.Named != nil:
		install = installNamedHooks
	}
	if settings != nil {
		if err := install(settings.doc, t, opts.hookBinary()); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, settings.path, err)
		}
	}
	if mcp != nil {
		if err := installMCP(mcp.doc, t.mcpKey(), t.mcpEntry(opts.Binary)); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, mcp.path, err)
		}
	}
	return commitBoth(settings, mcp, true,
		fmt.Sprintf("%d memnode hooks", len(t.Hooks)), "MCP server "+MCPServerName)
}

// Uninstall removes exactly what Install added: hook entries running
// `<memnode> hook <platform> …`, the memnode MCP server, and containers left empty by
// that removal.
func Uninstall(t Target, opts Options) ([]Change, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	settings, mcp, err := readBoth(t)
	if err != nil {
		return nil, err
	}
	n := 0
	if settings != nil && t.Named != nil {
		n = uninstallNamedHooks(settings.doc, t)
	} else if settings != nil && t.Flat != nil {
		if n, err = uninstallFlatHooks(settings.doc, t, opts.hookBinary()); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, settings.path, err)
		}
	} else if settings != nil {
		if n, err = uninstallHooks(settings.doc, t.Platform, opts.hookBinary()); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, settings.path, err)
		}
	}
	removed := false
	if mcp != nil {
		if removed, err = uninstallMCP(mcp.doc, t.mcpKey()); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, mcp.path, err)
		}
	}
	hooksDetail, mcpDetail := "no memnode hooks", "no memnode MCP server"
	if n > 0 {
		hooksDetail = fmt.Sprintf("removed %d memnode hooks", n)
	}
	if removed {
		mcpDetail = "removed MCP server " + MCPServerName
	}
	return commitBoth(settings, mcp, false, hooksDetail, mcpDetail)
}

// readBoth reads the hooks file and the MCP file (each nil when the target has none); when
// they are the same file both are one document.
func readBoth(t Target) (*file, *file, error) {
	settings, mcp, err := readBothFiles(t)
	for _, f := range []*file{settings, mcp} {
		if f != nil {
			f.agentKeys = t.AgentKeys
		}
	}
	return settings, mcp, err
}

func readBothFiles(t Target) (*file, *file, error) {
	newMode := t.NewMode
	if newMode == 0 {
		newMode = 0o600
	}
	if t.MCP == "" {
		settings, err := readFile(t.Settings, newMode)
		return settings, nil, err
	}
	mcp, err := readFile(t.MCP, newMode)
	if err != nil {
		return nil, nil, err
	}
	if t.Settings == "" {
		return nil, mcp, nil
	}
	if filepath.Clean(t.Settings) == filepath.Clean(t.MCP) {
		return mcp, mcp, nil
	}
	settings, err := readFile(t.Settings, newMode)
	if err != nil {
		return nil, nil, err
	}
	return settings, mcp, nil
}

func commitBoth(settings, mcp *file, create bool, sDetail, mDetail string) ([]Change, error) {
	if mcp == nil {
		c, err := settings.commit(sDetail, create)
		if err != nil {
			return nil, err
		}
		return []Change{c}, nil
	}
	if settings == nil || settings == mcp {
		detail := mDetail
		if settings != nil {
			detail = sDetail + ", " + mDetail
		}
		c, err := mcp.commit(detail, create)
		if err != nil {
			return nil, err
		}
		return []Change{c}, nil
	}
	c1, err := settings.commit(sDetail, create)
	if err != nil {
		return nil, err
	}
	c2, err := mcp.commit(mDetail, create)
	if err != nil {
		return []Change{c1}, err
	}
	return []Change{c1, c2}, nil
}

// shellQuote quotes a path for the shell the agent runs hook commands with.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%,=", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func hookCommand(binary, platform, sub string) string {
	return shellQuote(binary) + " hook " + platform + " " + sub
}

// ourSubcommand reports whether cmd is a hook command memnode installed, and which memnode
// event it runs. Ours: `<binary> hook <platform> <event>` where binary is this binary or
// any executable named memnode or memnode-hook (a moved binary's stale entry, or one written
// before the lean hook binary was installed, is still ours and gets replaced).
func ourSubcommand(cmd, platform, binary string) (string, bool) {
	cmd = strings.TrimSpace(cmd)
	var exe, rest string
	switch {
	case strings.HasPrefix(cmd, "'"):
		end := strings.Index(cmd[1:], "' ")
		if end < 0 {
			return "", false
		}
		exe, rest = strings.ReplaceAll(cmd[1:end+1], `'\''`, `'`), cmd[end+2:]
	case strings.HasPrefix(cmd, `"`):
		end := strings.Index(cmd[1:], `" `)
		if end < 0 {
			return "", false
		}
		exe, rest = cmd[1:end+1], cmd[end+2:]
	default:
		var ok bool
		exe, rest, ok = strings.Cut(cmd, " ")
		if !ok {
			return "", false
		}
	}
	// A quoted path with an embedded "' " is rare enough to fall back to the exact form.
	if strings.HasPrefix(cmd, shellQuote(binary)+" ") {
		exe, rest = binary, strings.TrimPrefix(cmd, shellQuote(binary)+" ")
	}
	base := filepath.Base(exe)
	if exe != binary && base != "memnode" && base != "memnode.exe" && base != "memnode-hook" && base != "memnode-hook.exe" {
		return "", false
	}
	sub, ok := strings.CutPrefix(strings.TrimSpace(rest), "hook "+platform+" ")
	if !ok {
		return "", false
	}
	sub = strings.TrimSpace(sub)
	return sub, sub != "" && !strings.ContainsAny(sub, " \t")
}
