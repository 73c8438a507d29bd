package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/platform"
)

// Installer writes memnode's hooks into Codex's hooks.json (~/.codex/hooks.json, or
// <project>/.codex/hooks.json for project scope, which Codex loads only in a trusted
// project), its MCP server into the config.toml beside it as [mcp_servers.memnode], and
// trusts the hooks: Codex skips untrusted hooks silently. The trust step runs
// `codex app-server`; Codex is looked up in PATH unless Codex names it.
type Installer struct {
	// Codex is the codex executable for the trust step; "" looks "codex" up in PATH.
	Codex string
}

var _ platform.Installer = Installer{}

// HookSpecs are the Codex hooks memnode installs (timeouts in seconds). PreToolUse cannot
// add context in Codex, so file context comes after a shell call that read files (Codex
// reads files with the shell: `cat`, `sed -n`), from the same PostToolUse hook that records
// the call: one process per tool call. A shell command that exits non-zero still fires
// PostToolUse (the rollout has its exit code); a tool that fails fires none. Codex clamps
// SessionEnd hooks to 3 s.
func HookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "SessionStart", Sub: platform.EventContext, Timeout: 60},
		{Event: "UserPromptSubmit", Sub: platform.EventSessionInit, Timeout: 60},
		{Event: "PostToolUse", Matcher: "*", Sub: platform.EventObservation, Timeout: 120},
		{Event: "Stop", Sub: platform.EventSummarize, Timeout: 120},
		{Event: "SessionEnd", Sub: platform.EventSessionEnd, Timeout: 3},
	}
}

// mcpComment is the line memnode writes above its MCP table.
const mcpComment = "# memnode's MCP server (`memnode uninstall codex` removes it)"

// backupSuffix names the copy of config.toml from before memnode first changed it.
const backupSuffix = ".memnode-backup"

// paths are the files one scope's installation edits.
type paths struct {
	hooks, config string // hooks.json and config.toml of the scope
	userConfig    string // where Codex keeps hook trust: always the user's config.toml
	cwd           string // the directory whose hooks Codex lists for the trust step
}

func pathsOf(opts install.Options) paths {
	dir := filepath.Join(opts.HomeDir, ".codex")
	p := paths{userConfig: filepath.Join(dir, "config.toml"), cwd: opts.HomeDir}
	if opts.Scope == install.ScopeProject {
		dir = filepath.Join(opts.ProjectDir, ".codex")
		p.cwd = opts.ProjectDir
	}
	p.hooks, p.config = filepath.Join(dir, "hooks.json"), filepath.Join(dir, "config.toml")
	return p
}

func hooksTarget(p paths, opts install.Options) install.Target {
	t := install.Target{Platform: Name, Settings: p.hooks, Hooks: HookSpecs(), NewMode: 0o600}
	if opts.Scope == install.ScopeProject {
		t.NewMode = 0o644 // files a team commits
	}
	return t
}

// Install implements platform.Installer. Over an older install whose hooks sat elsewhere in
// hooks.json (a second PostToolUse hook for file context), the trust entries of positions
// memnode no longer holds go, so uninstall can still give config.toml its bytes back.
func (i Installer) Install(opts install.Options) ([]install.Change, error) {
	p := pathsOf(opts)
	before, err := trustKeys(p.hooks)
	if err != nil {
		return nil, err
	}
	changes, err := install.Install(hooksTarget(p, opts), opts)
	if err != nil {
		return changes, err
	}
	if err := dropStaleTrust(p, before); err != nil {
		return changes, err
	}
	c, err := installMCP(p.config, opts)
	changes = append(changes, c)
	if err != nil {
		return changes, err
	}
	return append(changes, i.trust(p, opts)), nil
}

// trust runs the trust step and reports it as a change of the user's config.toml.
func (i Installer) trust(p paths, opts install.Options) install.Change {
	ch := install.Change{Path: p.userConfig, Action: "unchanged"}
	codex := i.Codex
	if codex == "" {
		var err error
		if codex, err = exec.LookPath("codex"); err != nil {
			ch.Detail = "hooks not trusted yet: codex is not in PATH; start codex and approve memnode's hooks in /hooks"
			return ch
		}
	}
	home := opts.HomeDir
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	n, err := trustHooks(codex, home, p.cwd, p.hooks)
	switch {
	case err != nil:
		ch.Detail = fmt.Sprintf("hooks not trusted yet (%v); start codex and approve memnode's hooks in /hooks", err)
	case n == 0:
		ch.Detail = "memnode's hooks already trusted"
	default:
		ch.Action, ch.Detail = "updated", fmt.Sprintf("trusted %d memnode hooks", n)
	}
	return ch
}

// Uninstall implements platform.Installer: memnode's trust entries (found from the hook
// positions memnode held in hooks.json), its hooks and its MCP table go; when nothing else
// changed, config.toml gets its original bytes back.
func (Installer) Uninstall(opts install.Options) ([]install.Change, error) {
	p := pathsOf(opts)
	keys, err := trustKeys(p.hooks)
	if err != nil {
		return nil, err
	}
	changes, err := install.Uninstall(hooksTarget(p, opts), opts)
	if err != nil {
		return changes, err
	}
	isKey := func(name []string) bool {
		return len(name) == 3 && name[0] == "hooks" && name[1] == "state" && keys[name[2]]
	}
	if p.userConfig != p.config {
		c, err := uninstallTOML(p.userConfig, isKey, "removed memnode's hook trust")
		changes = append(changes, c)
		if err != nil {
			return changes, err
		}
		isKey = func([]string) bool { return false }
	}
	c, err := uninstallTOML(p.config, func(name []string) bool { return isMCPTable(name) || isKey(name) }, "removed MCP server "+install.MCPServerName)
	return append(changes, c), err
}

// dropStaleTrust removes from the user's config.toml the trust entries of the positions in
// hooks.json that held memnode's hooks before (keys) and hold none now.
func dropStaleTrust(p paths, before map[string]bool) error {
	after, err := trustKeys(p.hooks)
	if err != nil {
		return err
	}
	stale := func(name []string) bool {
		return len(name) == 3 && name[0] == "hooks" && name[1] == "state" && before[name[2]] && !after[name[2]]
	}
	text, mode, exists, err := readText(p.userConfig)
	if err != nil || !exists {
		return err
	}
	rest, removed := removeTables(text, stale)
	if !removed {
		return nil
	}
	return writeFile(p.userConfig, rest, mode)
}

// isMCPTable reports whether a table is memnode's MCP server or one of its sub-tables.
func isMCPTable(name []string) bool {
	return len(name) >= 2 && name[0] == "mcp_servers" && name[1] == install.MCPServerName
}

// forwardedEnv are the variables Codex passes on to `memnode mcp`: Codex starts MCP
// servers with a small fixed environment, and without these a memnode with a non-default
// data dir or port would reach (or start) the wrong node.
var forwardedEnv = []string{"MEMNODE_DATA_DIR", "MEMNODE_PORT", "MEMNODE_TRANSPORT"}

// mcpTable is memnode's MCP table for binary.
func mcpTable(binary string) string {
	env := make([]string, len(forwardedEnv))
	for i, e := range forwardedEnv {
		env[i] = tomlString(e)
	}
	return mcpComment + "\n[mcp_servers." + install.MCPServerName + "]\ncommand = " + tomlString(binary) +
		"\nargs = [\"mcp\"]\nenv_vars = [" + strings.Join(env, ", ") + "]\n"
}

// installMCP adds (or updates) memnode's MCP table at the end of config.toml, keeping the
// file's bytes from before memnode's first change in a backup until uninstall.
func installMCP(path string, opts install.Options) (install.Change, error) {
	ch := install.Change{Path: path, Detail: "MCP server " + install.MCPServerName}
	orig, mode, exists, err := readText(path)
	if err != nil {
		return ch, err
	}
	want := mcpTable(opts.Binary)
	rest, had := removeTables(orig, isMCPTable)
	if had && strings.Contains(orig, want) {
		ch.Action = "unchanged"
		return ch, nil
	}
	text := rest
	switch {
	case text == "":
	case strings.HasSuffix(text, "\n\n"):
	case strings.HasSuffix(text, "\n"):
		text += "\n"
	default:
		text += "\n\n"
	}
	text += want
	if !exists {
		mode = 0o600
		if opts.Scope == install.ScopeProject {
			mode = 0o644
		}
	}
	if exists {
		if _, err := os.Lstat(path + backupSuffix); errors.Is(err, fs.ErrNotExist) {
			if err := writeFile(path+backupSuffix, orig, mode); err != nil {
				return ch, err
			}
		}
	}
	if err := writeFile(path, text, mode); err != nil {
		return ch, err
	}
	ch.Action = "updated"
	if !exists {
		ch.Action = "created"
	}
	return ch, nil
}

// uninstallTOML removes the tables drop selects from path. When what is left is the backup
// from before install (blank lines aside), the backup's bytes are put back; a file that
// held only memnode's tables is removed. The backup goes either way.
func uninstallTOML(path string, drop func([]string) bool, detail string) (install.Change, error) {
	ch := install.Change{Path: path, Detail: detail}
	backup := path + backupSuffix
	defer os.Remove(backup) // best effort: a leftover backup only holds the old bytes
	orig, mode, exists, err := readText(path)
	if err != nil || !exists {
		ch.Action = "absent"
		return ch, err
	}
	rest, removed := removeTables(orig, drop)
	rest = dropEmptyTables(rest, orig)
	if bak, err := os.ReadFile(backup); err == nil && normalized(string(bak)) == normalized(rest) {
		if string(bak) == orig {
			ch.Action = "unchanged"
			return ch, nil
		}
		ch.Action = "restored"
		return ch, writeFile(path, string(bak), mode)
	}
	if !removed {
		ch.Action = "unchanged"
		return ch, nil
	}
	if normalized(rest) == "" {
		ch.Action = "removed"
		if err := os.Remove(path); err != nil {
			return ch, fmt.Errorf("remove %s: %w", path, err)
		}
		return ch, nil
	}
	ch.Action = "updated"
	return ch, writeFile(path, strings.TrimRight(rest, "\n")+"\n", mode)
}

// dropEmptyTables removes the [hooks.state] / [hooks] headers Codex wrote for memnode's
// trust entries when nothing is left in them.
func dropEmptyTables(text, orig string) string {
	lines := splitLines(text)
	ts := tables(lines)
	empty := map[int]bool{}
	for i, t := range ts {
		if t.name == nil || len(t.name) > 2 || t.name[0] != "hooks" || (len(t.name) == 2 && t.name[1] != "state") {
			continue
		}
		if normalized(strings.Join(lines[t.start+1:t.end], "")) != "" {
			continue
		}
		// A parent header is empty only if no sub-table follows it.
		if i+1 < len(ts) && ts[i+1].name != nil && len(ts[i+1].name) > len(t.name) && ts[i+1].name[0] == "hooks" {
			continue
		}
		empty[i] = true
	}
	if len(empty) == 0 {
		return text
	}
	var b strings.Builder
	for i, t := range ts {
		if !empty[i] {
			b.WriteString(strings.Join(lines[t.start:t.end], ""))
		}
	}
	return b.String()
}

// trustKeys are the hooks.state keys of memnode's hooks in hooksFile: Codex keys trust by
// <file>:<event in snake_case>:<group index>:<handler index>.
func trustKeys(hooksFile string) (map[string]bool, error) {
	keys := map[string]bool{}
	b, err := os.ReadFile(hooksFile)
	if errors.Is(err, fs.ErrNotExist) {
		return keys, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", hooksFile, err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", install.ErrMalformed, hooksFile, err)
	}
	for event, groups := range doc.Hooks {
		for g, group := range groups {
			for h, handler := range group.Hooks {
				if ours(handler.Command) {
					keys[hooksFile+":"+snake(event)+":"+strconv.Itoa(g)+":"+strconv.Itoa(h)] = true
				}
			}
		}
	}
	return keys, nil
}

// snake turns Codex's event names into the snake_case of its trust keys (PostToolUse →
// post_tool_use).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func readText(path string) (text string, mode fs.FileMode, exists bool, err error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("stat %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), fi.Mode().Perm(), true, nil
}

func writeFile(path, text string, mode fs.FileMode) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := atomicfile.Write(path, []byte(text), mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Files implements platform.FileLister.
func (Installer) Files(opts install.Options) []string {
	p := pathsOf(opts)
	return []string{p.hooks, p.config}
}
