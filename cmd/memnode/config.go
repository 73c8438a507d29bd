package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/internal/datadir"
)

// cmdConfig reads and changes settings.json one key at a time: a change merges into the
// file (it never overwrites the other keys), is validated by the node's own rules and is
// written atomically, 0600.
func cmdConfig(ctx context.Context, env *cliEnv, args []string) int {
	sub := ""
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "get":
		pos, code, ok := newFlags(env, "config get", "config get KEY").parse(args, 1, 1)
		if !ok {
			return code
		}
		v, known := configs.Value(env.Settings, pos[0])
		if !known {
			return fail(env, "config get: unknown key %q ('memnode config list' shows them)", pos[0])
		}
		fmt.Fprintln(env.Stdout, v)
		return 0
	case "set":
		pos, code, ok := newFlags(env, "config set", "config set KEY VALUE (KEY: a settings.json key, or MAP_KEY.ENTRY)").parse(args, 2, 2)
		if !ok {
			return code
		}
		return configEdit(ctx, env, "set", pos[0], &pos[1])
	case "unset":
		pos, code, ok := newFlags(env, "config unset", "config unset KEY").parse(args, 1, 1)
		if !ok {
			return code
		}
		return configEdit(ctx, env, "unset", pos[0], nil)
	case "list":
		if _, code, ok := newFlags(env, "config list", "config list").parse(args, 0, 0); !ok {
			return code
		}
		return configList(env)
	case "help", "-h", "--help":
		fmt.Fprintln(env.Stdout, "usage: memnode config get KEY | set KEY VALUE | unset KEY | list   (settings.json in the data dir; a map entry is MAP_KEY.ENTRY)")
		return 0
	}
	return unknownSub(env, "config", sub, "get, set, unset or list")
}

func configEdit(ctx context.Context, env *cliEnv, verb, key string, value *string) int {
	path := datadir.Dir(env.DataDir).Settings()
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(env, "config %s: %v", verb, err)
	}
	file, err := configs.Edit(old, key, value)
	if err != nil {
		return fail(env, "config %s: %v", verb, err)
	}
	if err := datadir.Secure(env.DataDir); err != nil {
		return fail(env, "config %s: %v", verb, err)
	}
	if err := atomicfile.Write(path, file, 0o600); err != nil {
		return fail(env, "config %s: %v", verb, err)
	}
	what := key + " removed"
	if value != nil {
		what = key + " = " + *value
	}
	// A running node applies the live settings at once (configs.Info.Live); the others
	// when it starts.
	h, err := health(ctx, env)
	if err != nil {
		fmt.Fprintf(env.Stdout, "%s in %s; the node applies it when it starts\n", what, path)
		return 0
	}
	name, _, _ := strings.Cut(key, ".")
	if r, err := reloadSettings(ctx, env); err == nil && !slices.Contains(r.Pending, name) {
		fmt.Fprintf(env.Stdout, "%s in %s; the running node (pid %d) applied it\n", what, path, h.PID)
		return 0
	}
	fmt.Fprintf(env.Stdout, "%s in %s; the running node (pid %d) applies it after a restart: memnode stop && memnode start\n", what, path, h.PID)
	return 0
}

// reloadSettings asks the running node to read its settings again.
func reloadSettings(ctx context.Context, env *cliEnv) (apitype.SettingsReload, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, done := shortClient(env)
	defer done()
	var r apitype.SettingsReload
	err := c.Call(ctx, http.MethodPost, "/api/settings/reload", nil, &r)
	return r, err
}

// configList shows every setting with the value in effect and where it comes from.
func configList(env *cliEnv) int {
	path := datadir.Dir(env.DataDir).Settings()
	inFile := map[string]json.RawMessage{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &inFile); err != nil {
			return fail(env, "config list: %s is not a JSON object: %v", path, err)
		}
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KEY\tVALUE\tFROM\n")
	for _, f := range configs.Fields() {
		v, _ := configs.Value(env.Settings, f.Name)
		from := "default"
		if _, ok := inFile[f.Name]; ok {
			from = "settings.json"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, v, from)
	}
	tw.Flush()
	fmt.Fprintf(env.Stdout, "file: %s (environment variables such as MEMNODE_PORT override it)\n", path)
	return 0
}
