package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/configs"
)

// keysTestEnv runs cmdKeys in-process against an encrypted-file store in a temp data dir
// (forced through MEMNODE_KEYS_BACKEND so the test never touches the user's real keyring).
func keysTestEnv(t *testing.T, stdin string, extra map[string]string) (*cliEnv, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	vars := map[string]string{"MEMNODE_KEYS_BACKEND": "file", "MEMNODE_KEYS_PASSPHRASE": "test passphrase"}
	for k, v := range extra {
		vars[k] = v
	}
	var out, errb bytes.Buffer
	return &cliEnv{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] }, DataDir: t.TempDir(), Settings: configs.Default(),
	}, &out, &errb
}

func TestCmdKeysSetListDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the encrypted file store derives its key with scrypt at every command (seconds each under load); make test runs it")
	}
	const key = "sk-proj-CMDSECRET-abcdef0123456789"
	env, out, errb := keysTestEnv(t, key+"\r\n", nil)
	ctx := context.Background()
	if code := cmdKeys(ctx, env, []string{"set", "OpenAI"}); code != 0 {
		t.Fatalf("set: %d %s", code, errb)
	}
	if !strings.Contains(out.String(), "openai key stored in encrypted file") {
		t.Fatalf("set output: %q", out)
	}
	out.Reset()
	if code := cmdKeys(ctx, env, []string{"list"}); code != 0 {
		t.Fatalf("list: %d %s", code, errb)
	}
	for _, want := range []string{"store: encrypted file", "openai     set", "anthropic  not set"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("list output lacks %q:\n%s", want, out)
		}
	}
	s, err := openKeyStore(env)
	if err != nil {
		t.Fatal(err)
	}
	if k, src, err := aiKey(env, s, "openai"); err != nil || k != key || !strings.HasPrefix(src, "encrypted file") {
		t.Fatalf("aiKey = %q %q %v", k, src, err)
	}
	if strings.Contains(out.String()+errb.String(), key) {
		t.Fatal("key printed")
	}
	_ = filepath.WalkDir(env.DataDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
				t.Fatalf("key in plain file %s", p)
			}
		}
		return nil
	})
	if code := cmdKeys(ctx, env, []string{"delete", "openai"}); code != 0 {
		t.Fatalf("delete: %d %s", code, errb)
	}
	if code := cmdKeys(ctx, env, []string{"delete", "openai"}); code != 1 || !strings.Contains(errb.String(), "no key stored") {
		t.Fatalf("second delete: %d %q", code, errb)
	}
}

func TestCmdKeysRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		stdin string
		args  []string
		code  int
		msg   string
	}{
		"empty key":        {"\n", []string{"set", "gemini"}, 1, "empty key"},
		"two lines":        {"a\nb\n", []string{"set", "gemini"}, 1, "one line"},
		"unknown provider": {"x", []string{"set", "mistral"}, 2, "unknown provider"},
		"no args":          {"", nil, 2, "missing subcommand"},
		"missing provider": {"", []string{"set"}, 2, "usage"},
	} {
		t.Run(name, func(t *testing.T) {
			env, _, errb := keysTestEnv(t, tc.stdin, nil)
			if code := cmdKeys(ctx, env, tc.args); code != tc.code || !strings.Contains(errb.String(), tc.msg) {
				t.Fatalf("code %d stderr %q", code, errb)
			}
		})
	}
}

func TestCmdKeysEnvOverride(t *testing.T) {
	env, out, _ := keysTestEnv(t, "", map[string]string{"MEMNODE_GEMINI_API_KEY": "AIza-from-ci"})
	if code := cmdKeys(context.Background(), env, []string{"list"}); code != 0 {
		t.Fatal(code)
	}
	if !strings.Contains(out.String(), "gemini     from env MEMNODE_GEMINI_API_KEY") || strings.Contains(out.String(), "AIza-from-ci") {
		t.Fatalf("list: %s", out)
	}
	if k, src, err := aiKey(env, nil, "gemini"); k != "AIza-from-ci" || src != "env MEMNODE_GEMINI_API_KEY" || err != nil {
		t.Fatalf("aiKey = %q %q %v", k, src, err)
	}
}
