package team

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Op is one entry of the team's op-log: a change of a shared project, signed by the device
// that made it. Origin is that device's libp2p peer ID, which embeds its Ed25519 public key,
// so a signature proves the origin without any key directory the server could alter.
type Op struct {
	Pos         int64  // position on the cluster (0 before the push)
	Origin      string // author device (peer ID)
	TSeq        uint64 // the origin's team sequence: 1, 2, 3 … without gaps
	Project     string
	Kind        string
	RecordID    string
	HLC         uint64
	Payload     []byte // nil once the record was forgotten (content purged)
	PayloadHash string // hex SHA-256 of the payload as signed: survives the purge
	Author      string // "user/device", as the member names itself
	Sig         string // base64 Ed25519 signature over signingBytes
	// Oversize is the length of a payload over the record size limit that a pull left on
	// the cluster (Payload nil): not signed, only read to refuse the op.
	Oversize int64
}

// ErrBadSignature reports an op whose signature does not verify for its origin.
var ErrBadSignature = errors.New("team op signature does not verify")

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func hashPayload(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

// signingBytes is what a device signs: every field a reader acts on, the payload by hash so
// that a purged op still verifies. Fields are length-prefixed: no two ops share the bytes.
func signingBytes(op Op) []byte {
	var b strings.Builder
	b.WriteString("memnode-team-op/1\n")
	for _, f := range []string{op.Origin, strconv.FormatUint(op.TSeq, 10), op.Project, op.Kind, op.RecordID,
		strconv.FormatUint(op.HLC, 10), op.PayloadHash, op.Author} {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// sign fills the op's payload hash and signature with the device key.
func sign(key crypto.PrivKey, op *Op) error {
	op.PayloadHash = hashPayload(op.Payload)
	sig, err := key.Sign(signingBytes(*op))
	if err != nil {
		return fmt.Errorf("sign team op: %w", err)
	}
	op.Sig = base64.StdEncoding.EncodeToString(sig)
	return nil
}

// verify checks the op's signature against the key its origin names, and that the payload
// (when still present) is the one signed.
func verify(op Op) error {
	id, err := peer.Decode(op.Origin)
	if err != nil {
		return fmt.Errorf("%w: origin %q is not a device ID", ErrBadSignature, op.Origin)
	}
	pub, err := id.ExtractPublicKey()
	if err != nil {
		return fmt.Errorf("%w: origin %q: %w", ErrBadSignature, op.Origin, err)
	}
	sig, err := base64.StdEncoding.DecodeString(op.Sig)
	if err != nil {
		return fmt.Errorf("%w: %s/%d", ErrBadSignature, op.Origin, op.TSeq)
	}
	if ok, err := pub.Verify(signingBytes(op), sig); err != nil || !ok {
		return fmt.Errorf("%w: %s/%d", ErrBadSignature, op.Origin, op.TSeq)
	}
	if op.Payload != nil && hashPayload(op.Payload) != op.PayloadHash {
		return fmt.Errorf("%w: %s/%d payload changed", ErrBadSignature, op.Origin, op.TSeq)
	}
	return nil
}
