package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/memnode/memnode/keys"
)

// Environment variables of the key commands (read here, never in package keys).
const (
	envKeysPassphrase = "MEMNODE_KEYS_PASSPHRASE"
	envKeysBackend    = "MEMNODE_KEYS_BACKEND"
)

// cmdKeys manages AI provider keys: memnode keys set|list|delete.
func cmdKeys(_ context.Context, env *cliEnv, args []string) int {
	sub := ""
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	var fs *cmdFlags
	switch sub {
	case "set", "delete":
		fs = newFlags(env, "keys "+sub, "keys "+sub+" PROVIDER   (providers: "+strings.Join(keys.KnownProviders(), ", ")+")")
	case "list":
		fs = newFlags(env, "keys list", "keys list")
	case "help", "-h", "--help":
		fmt.Fprintln(env.Stdout, "usage: memnode keys set PROVIDER (key on stdin) | keys list | keys delete PROVIDER   (providers: "+strings.Join(keys.KnownProviders(), ", ")+")")
		return 0
	default:
		return unknownSub(env, "keys", sub, "set, list or delete")
	}
	n := 0
	if sub != "list" {
		n = 1
	}
	rest, code, ok := fs.parse(args, n, n)
	if !ok {
		return code
	}
	provider := ""
	if n == 1 {
		provider = strings.ToLower(rest[0])
		if !knownProvider(provider) {
			return fs.usageErr("unknown provider %q (want %s; openai also covers OpenAI-compatible endpoints)", rest[0], strings.Join(keys.KnownProviders(), ", "))
		}
	}
	store, err := openKeyStore(env)
	if err != nil && sub != "list" {
		return fail(env, "%v", err)
	}
	switch sub {
	case "set":
		key, err := readKey(env)
		if err != nil {
			return fail(env, "read key: %v", err)
		}
		if err := store.Set(provider, key); err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "%s key stored in %s\n", provider, store.Backend())
		if v := env.Getenv(keys.EnvVar(provider)); v != "" {
			fmt.Fprintf(env.Stdout, "note: %s is set and overrides the stored key\n", keys.EnvVar(provider))
		}
	case "delete":
		if err := store.Delete(provider); err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "%s key deleted from %s\n", provider, store.Backend())
	case "list":
		return listKeys(env, store, err)
	}
	return 0
}

func knownProvider(p string) bool {
	for _, k := range keys.KnownProviders() {
		if p == k {
			return true
		}
	}
	return false
}

func openKeyStore(env *cliEnv) (*keys.Store, error) {
	return keys.Open(keys.Config{
		Dir:        env.DataDir,
		Passphrase: env.Getenv(envKeysPassphrase),
		Backend:    env.Getenv(envKeysBackend),
	})
}

// listKeys shows, per provider, where its key comes from; never a value. A store that does
// not open is reported, but env overrides are still listed.
func listKeys(env *cliEnv, store *keys.Store, openErr error) int {
	set := map[string]bool{}
	if openErr == nil {
		fmt.Fprintf(env.Stdout, "store: %s\n", store.Backend())
		names, err := store.List()
		if err != nil {
			return fail(env, "%v", err)
		}
		for _, n := range names {
			set[n] = true
		}
	} else {
		fmt.Fprintf(env.Stdout, "store: unavailable (%v)\n", openErr)
	}
	for _, p := range keys.KnownProviders() {
		state := "not set"
		switch {
		case env.Getenv(keys.EnvVar(p)) != "":
			state = "from env " + keys.EnvVar(p)
			if set[p] {
				state += " (overrides stored key)"
			}
		case set[p]:
			state = "set"
		}
		fmt.Fprintf(env.Stdout, "%-10s %s\n", p, state)
	}
	if openErr != nil {
		return 1
	}
	return 0
}

// readKey reads one key: hidden input from a terminal, otherwise the first line of a pipe.
func readKey(env *cliEnv) (string, error) {
	return readSecret(env, "paste the key (input is hidden), then Enter: ",
		"empty key: pipe it in (memnode keys set PROVIDER < keyfile) or paste it at the prompt")
}

// readSecret reads one secret line: from a terminal without echo after prompt, otherwise
// from the pipe. ifEmpty is the error when nothing was given: it says how to give it.
func readSecret(env *cliEnv, prompt, ifEmpty string) (string, error) {
	var raw []byte
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(env.Stderr, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.Stderr)
		if err != nil {
			return "", err
		}
		raw = b
	} else {
		b, err := io.ReadAll(io.LimitReader(bufio.NewReader(env.Stdin), 8<<10+1))
		if err != nil {
			return "", err
		}
		if len(b) > 8<<10 {
			return "", errors.New("input longer than 8 KiB; pipe just the key")
		}
		raw = b
	}
	defer clear(raw)
	s := strings.TrimSpace(string(bytes.TrimRight(raw, "\r\n")))
	if s == "" {
		return "", errors.New(ifEmpty)
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", errors.New("expected the key on one line")
	}
	return s, nil
}

// aiKey returns the key for provider and where it came from: the env override
// (MEMNODE_<PROVIDER>_API_KEY, for CI) wins over the store. The daemon wiring uses it to fill
// llm.ProviderConfig.APIKey; a missing key is ("", "", nil).
func aiKey(env *cliEnv, store *keys.Store, provider string) (key, source string, err error) {
	if v := strings.TrimSpace(env.Getenv(keys.EnvVar(provider))); v != "" {
		return v, "env " + keys.EnvVar(provider), nil
	}
	if store == nil {
		return "", "", nil
	}
	k, err := store.Get(provider)
	if errors.Is(err, keys.ErrNotFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return k, store.Backend(), nil
}
