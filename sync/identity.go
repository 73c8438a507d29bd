package sync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/internal/atomicfile"
)

// LoadOrCreateIdentity reads the device's Ed25519 libp2p key from path, creating it (0600,
// written atomically) on first use. The peer ID it returns is the device's replica origin, so
// call it before opening the replica.
func LoadOrCreateIdentity(path string) (crypto.PrivKey, peer.ID, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		priv, err := crypto.UnmarshalPrivateKey(b)
		if err != nil {
			return nil, "", fmt.Errorf("read identity %s: %w", path, err)
		}
		if priv.Type() != crypto.Ed25519 {
			return nil, "", fmt.Errorf("read identity %s: %w", path, ErrBadIdentity)
		}
		id, err := peer.IDFromPrivateKey(priv)
		if err != nil {
			return nil, "", fmt.Errorf("read identity %s: %w", path, err)
		}
		return priv, id, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, "", fmt.Errorf("read identity: %w", err)
	}
	priv, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		return nil, "", fmt.Errorf("create identity: %w", err)
	}
	raw, err := crypto.MarshalPrivateKey(priv)
	if err != nil {
		return nil, "", fmt.Errorf("create identity: %w", err)
	}
	if err := writeFileAtomic(path, raw); err != nil {
		return nil, "", fmt.Errorf("create identity: %w", err)
	}
	id, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return nil, "", fmt.Errorf("create identity: %w", err)
	}
	return priv, id, nil
}

// ErrBadIdentity reports an identity file that does not hold an Ed25519 key.
var ErrBadIdentity = errors.New("identity is not an Ed25519 key")

// writeFileAtomic writes data to path with mode 0600 so that a crash leaves either the old
// file or the new one, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}
