package mcponly

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/platform"
)

// gooseInstaller adds memnode as a stdio extension under "extensions:" in Goose's
// config.yaml. Goose rewrites that file itself (2-space block YAML), so memnode's entry is
// found again by its key, not by markers: uninstall removes the "memnode:" key under
// "extensions:" and everything indented below it, and nothing else.
type gooseInstaller struct{}

var _ platform.Installer = gooseInstaller{}

// GooseConfig is Goose's config file under configDir, the XDG config directory
// (install.Options.UserConfigDir: $XDG_CONFIG_HOME, else ~/.config). Goose finds it with
// etcetera's choose_app_strategy(...).config_dir(), the Xdg strategy on Linux and macOS:
// $XDG_CONFIG_HOME/goose when that is absolute, else ~/.config/goose. Not mirrored: a
// relative XDG_CONFIG_HOME, which etcetera ignores and memnode resolves against the working
// directory, and GOOSE_PATH_ROOT, which newer Goose builds put before it.
func GooseConfig(configDir string) string {
	return filepath.Join(configDir, "goose", "config.yaml")
}

// gooseBlock is memnode's extension, indented under extensions:. Strings are JSON-quoted,
// which YAML reads as double-quoted scalars.
func gooseBlock(binary string) string {
	q := strconv.Quote
	return "  " + install.MCPServerName + ":\n" +
		"    enabled: true\n" +
		"    type: stdio\n" +
		"    name: " + install.MCPServerName + "\n" +
		"    cmd: " + q(binary) + "\n" +
		"    args:\n    - mcp\n" +
		"    description: " + q("memnode: persistent memory of your coding sessions") + "\n" +
		"    timeout: 300\n"
}

// ErrGooseConfig means config.yaml's extensions are not in block style; it is left alone.
var ErrGooseConfig = errors.New("goose config.yaml: extensions is not a block mapping")

// gooseEdit returns lines without memnode's extension and where "extensions:" is (-1 when
// absent).
func gooseEdit(lines []string) (kept []string, ext int, found bool, err error) {
	ext = -1
	in, skip := false, false
	for _, l := range lines {
		top := l != "" && l[0] != ' ' && l[0] != '#'
		switch {
		case top && strings.HasPrefix(l, "extensions:"):
			if strings.TrimSpace(strings.TrimPrefix(l, "extensions:")) != "" {
				return nil, 0, false, ErrGooseConfig
			}
			in, skip, ext = true, false, len(kept)
		case top:
			in, skip = false, false
		case in && strings.HasPrefix(l, "  "+install.MCPServerName+":"):
			skip, found = true, true
			continue
		case in && skip && (strings.HasPrefix(l, "   ") || strings.TrimSpace(l) == ""):
			continue
		case in:
			skip = false
		}
		kept = append(kept, l)
	}
	return kept, ext, found, nil
}

func readLines(path string) ([]string, fs.FileMode, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o600, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("stat %s: %w", path, err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil, fi.Mode().Perm(), true, nil
	}
	return strings.Split(s, "\n"), fi.Mode().Perm(), true, nil
}

func writeLines(path string, lines []string, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return atomicfile.Write(path, []byte(strings.Join(lines, "\n")+"\n"), mode)
}

// goosePath is the config file of opts (Goose has only the user's), refused when the
// config directory is not absolute.
func goosePath(opts install.Options) (string, error) {
	dir := opts.UserConfigDir()
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%w: goose config directory %q is not absolute", install.ErrBadOption, dir)
	}
	return GooseConfig(dir), nil
}

func (gooseInstaller) Install(opts install.Options) ([]install.Change, error) {
	if !filepath.IsAbs(opts.Binary) {
		return nil, fmt.Errorf("%w: goose needs the memnode binary's absolute path (%q)", install.ErrBadOption, opts.Binary)
	}
	path, err := goosePath(opts)
	if err != nil {
		return nil, err
	}
	lines, mode, exists, err := readLines(path)
	if err != nil {
		return nil, err
	}
	kept, ext, _, err := gooseEdit(lines)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	block := strings.Split(strings.TrimSuffix(gooseBlock(opts.Binary), "\n"), "\n")
	var out []string
	if ext < 0 {
		out = append(append(append(out, kept...), "extensions:"), block...)
	} else {
		out = append(append(append(out, kept[:ext+1]...), block...), kept[ext+1:]...)
	}
	ch := install.Change{Path: path, Detail: "Goose extension " + install.MCPServerName}
	switch {
	case !exists:
		ch.Action = "created"
	case strings.Join(out, "\n") == strings.Join(lines, "\n"):
		ch.Action = "unchanged"
		return []install.Change{ch}, nil
	default:
		ch.Action = "updated"
	}
	return []install.Change{ch}, writeLines(path, out, mode)
}

func (gooseInstaller) Uninstall(opts install.Options) ([]install.Change, error) {
	path, err := goosePath(opts)
	if err != nil {
		return nil, err
	}
	lines, mode, exists, err := readLines(path)
	if err != nil || !exists {
		return []install.Change{{Path: path, Action: "absent"}}, err
	}
	kept, ext, found, err := gooseEdit(lines)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	ch := install.Change{Path: path, Action: "unchanged", Detail: "no memnode extension"}
	if !found {
		return []install.Change{ch}, nil
	}
	ch.Detail = "removed Goose extension " + install.MCPServerName
	if ext >= 0 && (ext == len(kept)-1 || (kept[ext+1] != "" && kept[ext+1][0] != ' ')) {
		kept = append(kept[:ext], kept[ext+1:]...) // an "extensions:" only memnode's entry was under
	}
	if len(kept) == 0 {
		ch.Action = "removed"
		return []install.Change{ch}, os.Remove(path)
	}
	ch.Action = "updated"
	return []install.Change{ch}, writeLines(path, kept, mode)
}
