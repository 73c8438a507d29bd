package keys

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// Provider names a key may be stored for. "openai" also covers OpenAI-compatible endpoints.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Gemini    = "gemini"
)

// TeamPassword is the entry that holds the team cluster user's password (`memnode team
// join`). It is not an AI provider, so KnownProviders does not list it.
const TeamPassword = "team"

// KnownProviders returns the providers a key may be stored for, in display order.
func KnownProviders() []string { return []string{Anthropic, OpenAI, Gemini} }

// EnvVar is the environment variable that overrides the stored key for provider
// (MEMNODE_ANTHROPIC_API_KEY …). Only cmd/ reads it.
func EnvVar(provider string) string {
	return "MEMNODE_" + strings.ToUpper(provider) + "_API_KEY"
}

// Backend choices for Config.Backend.
const (
	BackendAuto   = ""
	BackendOS     = "os"
	BackendKernel = "kernel"
	BackendFile   = "file"
)

// FileName is the encrypted key file inside Config.Dir.
const FileName = "keys.enc"

// Sentinel errors.
var (
	ErrNotFound        = errors.New("no key stored")
	ErrUnknownProvider = errors.New("unknown provider (want anthropic, openai or gemini)")
	ErrEmptyKey        = errors.New("empty key")
	ErrInvalidKey      = errors.New("key contains whitespace or control characters")
	// ErrNoStore means neither the OS keyring nor a fallback works on this machine.
	ErrNoStore = errors.New("no key store available")
	// ErrPassphraseRequired means keys live in the encrypted file but no passphrase was given.
	ErrPassphraseRequired = errors.New("keys are in an encrypted file: set MEMNODE_KEYS_PASSPHRASE to open it, or MEMNODE_KEYS_BACKEND=kernel (or os) to use another store (the file stays as it is)")
	// ErrBadPassphrase means the encrypted file does not open with the given passphrase.
	ErrBadPassphrase = errors.New("wrong passphrase for the encrypted key file (or the file is damaged)")
)

// Config configures Open.
type Config struct {
	// Service namespaces the entries ("memnode"); tests use their own.
	Service string
	// Dir is the data dir; the encrypted file lives at Dir/keys.enc.
	Dir string
	// Passphrase enables the encrypted-file store.
	Passphrase string
	// Backend forces a store (BackendOS, BackendKernel, BackendFile); "" picks automatically.
	Backend string
	// ProbeTimeout bounds the OS keyring probe; default 3s. OpTimeout bounds each OS keyring
	// operation afterwards (it may show an unlock prompt); default 30s.
	ProbeTimeout, OpTimeout time.Duration
	// ScryptN is the scrypt cost for the encrypted file; default 1<<15. Tests lower it.
	ScryptN int
	Logger  *slog.Logger
}

// backend is one concrete store.
type backend interface {
	set(provider, secret string) error
	get(provider string) (string, error)
	del(provider string) error
}

// Store reads and writes provider keys in one backend. Safe for concurrent use within a
// process.
type Store struct {
	b    backend
	name string
	log  *slog.Logger
}

// Open picks the store as described in the package doc and says which one in Backend().
func Open(cfg Config) (*Store, error) {
	if cfg.Service == "" {
		cfg.Service = "memnode"
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = 3 * time.Second
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 30 * time.Second
	}
	if cfg.ScryptN <= 0 {
		cfg.ScryptN = 1 << 15
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := open(cfg)
	if err != nil {
		return nil, err
	}
	st.log = log
	log.Debug("key store opened", "store", st.name)
	return st, nil
}

func open(cfg Config) (*Store, error) {
	filePath := filepath.Join(cfg.Dir, FileName)
	fileStore := func() (*Store, error) {
		if cfg.Dir == "" {
			return nil, fmt.Errorf("open encrypted key file: no data dir")
		}
		if cfg.Passphrase == "" {
			return nil, ErrPassphraseRequired
		}
		return &Store{b: &encFile{path: filePath, pass: cfg.Passphrase, n: cfg.ScryptN},
			name: "encrypted file " + filePath + " (scrypt + AES-256-GCM)"}, nil
	}
	switch cfg.Backend {
	case BackendOS:
		ok, err := probeOS(cfg)
		if err != nil {
			return nil, fmt.Errorf("open os keyring: %w", err)
		}
		return &Store{b: ok, name: osName()}, nil
	case BackendKernel:
		k, err := openKernel(cfg.Service)
		if err != nil {
			return nil, fmt.Errorf("open kernel keyring: %w", err)
		}
		return &Store{b: k, name: k.describe()}, nil
	case BackendFile:
		return fileStore()
	case BackendAuto:
	default:
		return nil, fmt.Errorf("open key store: unknown backend %q (want os, kernel or file)", cfg.Backend)
	}

	osb, osErr := probeOS(cfg)
	if osErr == nil {
		return &Store{b: osb, name: osName()}, nil
	}
	// A file holding keys keeps the choice on it (never a silent switch of stores); an
	// empty one, left by deleting its last key, does not.
	_, statErr := os.Stat(filePath)
	if cfg.Passphrase != "" || (cfg.Dir != "" && statErr == nil && !sealedEmpty(filePath)) {
		return fileStore()
	}
	k, kErr := openKernel(cfg.Service)
	if kErr == nil {
		return &Store{b: k, name: k.describe()}, nil
	}
	return nil, fmt.Errorf("%w: OS keyring: %v; kernel keyring: %v; set MEMNODE_KEYS_PASSPHRASE to use an encrypted file", ErrNoStore, osErr, kErr)
}

// Backend names the store in use, for the user ("os-keyring (Secret Service)", …).
func (s *Store) Backend() string { return s.name }

// Set stores key for provider, replacing any previous one.
func (s *Store) Set(provider, key string) error {
	if err := checkProvider(provider); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.b.set(provider, key); err != nil {
		return fmt.Errorf("store %s key in %s: %w", provider, s.name, err)
	}
	s.log.Info("key stored", "provider", provider, "store", s.name)
	return nil
}

// Get returns the key for provider, or ErrNotFound.
func (s *Store) Get(provider string) (string, error) {
	if err := checkProvider(provider); err != nil {
		return "", err
	}
	k, err := s.b.get(provider)
	if errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("%s: %w", provider, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read %s key from %s: %w", provider, s.name, err)
	}
	return k, nil
}

// Delete removes the key for provider; deleting a missing key returns ErrNotFound.
func (s *Store) Delete(provider string) error {
	if err := checkProvider(provider); err != nil {
		return err
	}
	err := s.b.del(provider)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%s: %w", provider, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s key from %s: %w", provider, s.name, err)
	}
	s.log.Info("key deleted", "provider", provider, "store", s.name)
	return nil
}

// List returns the providers that have a key stored (never the keys).
func (s *Store) List() ([]string, error) {
	var out []string
	for _, p := range KnownProviders() {
		_, err := s.b.get(p)
		switch {
		case err == nil:
			out = append(out, p)
		case errors.Is(err, ErrNotFound):
		default:
			return out, fmt.Errorf("list keys in %s: %w", s.name, err)
		}
	}
	return out, nil
}

func checkProvider(p string) error {
	if p == TeamPassword {
		return nil
	}
	for _, k := range KnownProviders() {
		if p == k {
			return nil
		}
	}
	return fmt.Errorf("%q: %w", p, ErrUnknownProvider)
}

func checkKey(k string) error {
	if k == "" {
		return ErrEmptyKey
	}
	if len(k) > 4096 {
		return fmt.Errorf("key longer than 4096 bytes")
	}
	for _, r := range k {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return ErrInvalidKey
		}
	}
	return nil
}
