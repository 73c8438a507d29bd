package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/crypto/scrypt"

	"github.com/memnode/memnode/internal/atomicfile"
)

// encFile keeps all keys in one AES-256-GCM sealed JSON map; the AES key is derived from the
// passphrase with scrypt.
type encFile struct {
	path string
	pass string
	n    int
	mu   sync.Mutex
}

// sealed is the on-disk format. Only ciphertext and KDF parameters are stored.
type sealed struct {
	Version int    `json:"v"`
	KDF     string `json:"kdf"`
	N       int    `json:"n"`
	R       int    `json:"r"`
	P       int    `json:"p"`
	Salt    []byte `json:"salt"`
	Nonce   []byte `json:"nonce"`
	Data    []byte `json:"data"`
}

// aad binds the ciphertext to this use, so it cannot be replayed as another sealed blob.
var aad = []byte("memnode keys v1")

func (f *encFile) aead(salt []byte, n, r, p int) (cipher.AEAD, error) {
	key, err := scrypt.Key([]byte(f.pass), salt, n, r, p, 32)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (f *encFile) load() (map[string]string, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	var s sealed
	if err := json.Unmarshal(b, &s); err != nil || s.Version != 1 || s.KDF != "scrypt" {
		return nil, fmt.Errorf("key file %s: unknown format", f.path)
	}
	if s.N < 2 || s.N > 1<<22 || s.R < 1 || s.R > 32 || s.P < 1 || s.P > 16 {
		return nil, fmt.Errorf("key file %s: KDF parameters out of range", f.path)
	}
	a, err := f.aead(s.Salt, s.N, s.R, s.P)
	if err != nil {
		return nil, err
	}
	if len(s.Nonce) != a.NonceSize() {
		return nil, ErrBadPassphrase
	}
	plain, err := a.Open(nil, s.Nonce, s.Data, aad)
	if err != nil {
		return nil, ErrBadPassphrase
	}
	m := map[string]string{}
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, ErrBadPassphrase
	}
	clear(plain)
	return m, nil
}

func (f *encFile) save(m map[string]string) error {
	plain, err := json.Marshal(m)
	if err != nil {
		return err
	}
	defer clear(plain)
	s := sealed{Version: 1, KDF: "scrypt", N: f.n, R: 8, P: 1, Salt: make([]byte, 16)}
	if _, err := rand.Read(s.Salt); err != nil {
		return err
	}
	a, err := f.aead(s.Salt, s.N, s.R, s.P)
	if err != nil {
		return err
	}
	s.Nonce = make([]byte, a.NonceSize())
	if _, err := rand.Read(s.Nonce); err != nil {
		return err
	}
	s.Data = a.Seal(nil, s.Nonce, plain, aad)
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(f.path, b); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	return nil
}

func (f *encFile) set(p, k string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.load()
	if err != nil {
		return err
	}
	m[p] = k
	return f.save(m)
}

func (f *encFile) get(p string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.load()
	if err != nil {
		return "", err
	}
	k, ok := m[p]
	if !ok {
		return "", ErrNotFound
	}
	return k, nil
}

func (f *encFile) del(p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.load()
	if err != nil {
		return err
	}
	if _, ok := m[p]; !ok {
		return ErrNotFound
	}
	delete(m, p)
	return f.save(m)
}

// sealedEmpty reports whether the key file at path holds no key, which its size tells
// without the passphrase: GCM adds a 16-byte tag to the plaintext, and an empty map is
// "{}". Such a file is what `keys delete` of the last key leaves; it must not keep the
// automatic choice on the file store (and ask for a passphrase) for good.
func sealedEmpty(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var s sealed
	return json.Unmarshal(b, &s) == nil && s.Version == 1 && len(s.Data) <= len("{}")+16
}

// writeFileAtomic writes b with mode 0600 via a temp file, fsync and rename, so a crash
// leaves either the old or the new file, never a torn one.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, b, 0o600)
}
