package keys

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

const secret = "sk-ant-api03-TOPSECRETVALUE-1234567890"

// exercise runs the full Set/Get/List/Delete cycle on a store.
func exercise(t *testing.T, s *Store) {
	t.Helper()
	if _, err := s.Get(Anthropic); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before Set: %v", err)
	}
	if err := s.Set(Anthropic, secret); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := s.Set(Gemini, "AIza-first"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(Gemini, "AIza-second"); err != nil {
		t.Fatal(err)
	}
	if k, err := s.Get(Anthropic); err != nil || k != secret {
		t.Fatalf("Get = %q, %v", k, err)
	}
	if k, _ := s.Get(Gemini); k != "AIza-second" {
		t.Fatalf("Set must replace: %q", k)
	}
	if l, err := s.List(); err != nil || strings.Join(l, ",") != "anthropic,gemini" {
		t.Fatalf("List = %v, %v", l, err)
	}
	if err := s.Delete(Gemini); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(Gemini); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete(Anthropic); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Fatalf("List after delete = %v", l)
	}
	if err := s.Set("mistral", "x"); !errors.Is(err, ErrUnknownProvider) {
		t.Fatalf("unknown provider: %v", err)
	}
	if err := s.Set(OpenAI, ""); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
	if err := s.Set(OpenAI, "sk-a\nb"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("key with newline: %v", err)
	}
}

func TestOSKeyring(t *testing.T) {
	keyring.MockInit()
	s, err := Open(Config{Service: "memnode-test", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Backend(), "os-keyring") {
		t.Fatalf("Backend = %q", s.Backend())
	}
	exercise(t, s)
}

func TestFallbackWhenOSKeyringFails(t *testing.T) {
	keyring.MockInitWithError(errors.New("The name org.freedesktop.secrets was not provided by any .service files"))
	t.Cleanup(keyring.MockInit)
	dir := t.TempDir()

	s, err := Open(Config{Service: fmt.Sprintf("memnode-test-%d", os.Getpid()), Dir: dir, Passphrase: "correct horse", ScryptN: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Backend(), "encrypted file") || !strings.Contains(s.Backend(), dir) {
		t.Fatalf("with a passphrase the encrypted file is used: %q", s.Backend())
	}
	if err := s.Set(OpenAI, secret); err != nil {
		t.Fatal(err)
	}
	// The file exists now: without a passphrase Open must say so, not silently switch stores.
	if _, err := Open(Config{Dir: dir}); !errors.Is(err, ErrPassphraseRequired) || !strings.Contains(err.Error(), "MEMNODE_KEYS_BACKEND=kernel") {
		t.Fatalf("Open without passphrase: %v", err)
	}
	// Once its last key is deleted, the empty file no longer holds the choice: without a
	// passphrase the next store is used (here the kernel keyring, where there is one).
	if err := s.Delete(OpenAI); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Fatalf("the emptied file: %v", err)
	}
	if _, err := Open(Config{Service: fmt.Sprintf("memnode-test-%d", os.Getpid()), Dir: dir}); errors.Is(err, ErrPassphraseRequired) {
		t.Fatalf("an empty encrypted file locks the other stores out: %v", err)
	}

	k, err := Open(Config{Service: fmt.Sprintf("memnode-test-%d", os.Getpid()), Dir: t.TempDir()})
	if err != nil {
		t.Skipf("kernel keyring unavailable here: %v", err)
	}
	if !strings.HasPrefix(k.Backend(), "linux kernel keyring") || !strings.Contains(k.Backend(), "reboot") {
		t.Fatalf("headless default is the kernel keyring and says it does not survive reboot: %q", k.Backend())
	}
}

func TestKernelKeyring(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Service: fmt.Sprintf("memnode-test-kernel-%d", os.Getpid()), Dir: dir, Backend: BackendKernel})
	if err != nil {
		t.Skipf("kernel keyring unavailable here: %v", err)
	}
	exercise(t, s)
	if err := s.Set(OpenAI, secret); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Delete(OpenAI) })
	// A second Store (as the daemon would open) sees the key.
	s2, err := Open(Config{Service: fmt.Sprintf("memnode-test-kernel-%d", os.Getpid()), Backend: BackendKernel})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := s2.Get(OpenAI); err != nil || k != secret {
		t.Fatalf("second store Get = %q, %v", k, err)
	}
	assertNotInFiles(t, dir, secret)
}

func TestEncryptedFile(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, Passphrase: "correct horse", Backend: BackendFile, ScryptN: 1 << 10}
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, s)
	if err := s.Set(Anthropic, secret); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", fi.Mode(), err)
	}
	assertNotInFiles(t, dir, secret)
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}

	again, _ := Open(cfg)
	if k, err := again.Get(Anthropic); err != nil || k != secret {
		t.Fatalf("reopen Get = %q, %v", k, err)
	}
	wrong := cfg
	wrong.Passphrase = "battery staple"
	w, _ := Open(wrong)
	if _, err := w.Get(Anthropic); !errors.Is(err, ErrBadPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if err := w.Set(OpenAI, "sk-x"); !errors.Is(err, ErrBadPassphrase) {
		t.Fatalf("a wrong passphrase must not overwrite the file: %v", err)
	}
	if k, _ := again.Get(Anthropic); k != secret {
		t.Fatal("file damaged by a wrong-passphrase write")
	}

	// Tampering is detected.
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte(`"data":"`), []byte(`"data":"AAAA`), 1)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Get(Anthropic); err == nil {
		t.Fatal("tampered file opened")
	}
}

// TestKeyNeverLogged captures every log line (debug, JSON) of every store while keys are
// set, read, listed and deleted, and scans the data dir for the key's bytes.
func TestKeyNeverLogged(t *testing.T) {
	keyring.MockInit()
	dir := t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfgs := []Config{
		{Service: "memnode-test", Dir: dir, Logger: log},
		{Dir: dir, Passphrase: "pw", Backend: BackendFile, ScryptN: 1 << 10, Logger: log},
		{Service: fmt.Sprintf("memnode-test-log-%d", os.Getpid()), Dir: dir, Backend: BackendKernel, Logger: log},
	}
	for _, cfg := range cfgs {
		s, err := Open(cfg)
		if err != nil {
			continue // kernel keyring may be unavailable
		}
		if err := s.Set(Anthropic, secret); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(Anthropic); err != nil {
			t.Fatal(err)
		}
		_, _ = s.List()
		if err := s.Delete(Anthropic); err != nil {
			t.Fatal(err)
		}
		err = s.Set(Anthropic, secret+" with space")
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Fatalf("invalid key error must not echo the key: %v", err)
		}
	}
	if !strings.Contains(logs.String(), "key stored") {
		t.Fatalf("expected store logs:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), "TOPSECRET") {
		t.Fatalf("key in logs:\n%s", logs.String())
	}
	assertNotInFiles(t, dir, secret)
}

func TestOSKeyringTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, err := withTimeout(10*time.Millisecond, func() (string, error) { <-release; return "", nil })
	if !errors.Is(err, errTimeout) {
		t.Fatalf("err = %v", err)
	}
}

func TestForcedBackendErrors(t *testing.T) {
	if _, err := Open(Config{Backend: "vault"}); err == nil {
		t.Fatal("unknown backend accepted")
	}
	if _, err := Open(Config{Backend: BackendFile, Dir: t.TempDir()}); !errors.Is(err, ErrPassphraseRequired) {
		t.Fatalf("file without passphrase: %v", err)
	}
	keyring.MockInitWithError(errors.New("no dbus"))
	t.Cleanup(keyring.MockInit)
	if _, err := Open(Config{Backend: BackendOS}); err == nil || !strings.Contains(err.Error(), "no dbus") {
		t.Fatalf("forced os keyring failure must say why: %v", err)
	}
}

func TestEnvVar(t *testing.T) {
	if EnvVar(Gemini) != "MEMNODE_GEMINI_API_KEY" {
		t.Fatal(EnvVar(Gemini))
	}
}

func assertNotInFiles(t *testing.T, dir, needle string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(needle)) {
				t.Fatalf("key found in file %s", p)
			}
		}
		return nil
	})
}
