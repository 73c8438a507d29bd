package sync

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// Invite errors. A joiner sees exactly one of them, never the reason the inviter had.
var (
	ErrInviteMalformed = errors.New("invite code is malformed (check for a typo)")
	ErrInviteExpired   = errors.New("invite code has expired: run `memnode peers invite` again")
	ErrInviteRejected  = errors.New("invite was refused: the code is wrong, expired or already used")
	// ErrInviterUnreachable: the inviting device is offline, or it has no open invite any more
	// (it then refuses strangers' connections outright, so the joiner cannot tell which).
	ErrInviterUnreachable = errors.New("cannot pair with the inviting device: it is unreachable, or the code was already used or has expired")
	ErrAlreadyInGroup     = errors.New("this device already belongs to a group with other devices: remove it there first")
)

const (
	inviteVersion = 1
	invitePrefix  = "MN1"
	secretLen     = 16 // 128-bit invite secret
)

var inviteEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// inviteCode is what an invite code carries: the secret the joiner proves it holds, and where
// and whom to dial. The inviter's peer ID makes Noise authenticate the inviter to the joiner.
type inviteCode struct {
	Secret  [secretLen]byte
	Expires time.Time // second precision
	Inviter peer.ID
	Addr    ma.Multiaddr
}

func (c inviteCode) String() string {
	b := []byte{inviteVersion}
	b = append(b, c.Secret[:]...)
	b = binary.AppendUvarint(b, uint64(c.Expires.Unix()))
	pid := []byte(c.Inviter)
	b = binary.AppendUvarint(b, uint64(len(pid)))
	b = append(b, pid...)
	ab := c.Addr.Bytes()
	b = binary.AppendUvarint(b, uint64(len(ab)))
	b = append(b, ab...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return invitePrefix + inviteEncoding.EncodeToString(b)
}

// parseInvite decodes a code typed or pasted by a person: case, spaces and dashes are
// ignored. It checks the format and the checksum, not the expiry.
func parseInvite(s string) (inviteCode, error) {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "\n", "", "\t", "").Replace(s))
	if !strings.HasPrefix(s, invitePrefix) {
		return inviteCode{}, ErrInviteMalformed
	}
	b, err := inviteEncoding.DecodeString(s[len(invitePrefix):])
	if err != nil || len(b) < 1+secretLen+4 {
		return inviteCode{}, ErrInviteMalformed
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(sum) || body[0] != inviteVersion {
		return inviteCode{}, ErrInviteMalformed
	}
	var c inviteCode
	copy(c.Secret[:], body[1:1+secretLen])
	d := &decoder{b: body[1+secretLen:]}
	exp := d.uvarint()
	pid := d.bytes(128)
	addr := d.bytes(256)
	if d.err != nil || len(d.b) != 0 || exp > 1<<40 {
		return inviteCode{}, ErrInviteMalformed
	}
	c.Expires = time.Unix(int64(exp), 0)
	if c.Inviter, err = peer.IDFromBytes(pid); err != nil {
		return inviteCode{}, ErrInviteMalformed
	}
	if c.Addr, err = ma.NewMultiaddrBytes(addr); err != nil {
		return inviteCode{}, ErrInviteMalformed
	}
	return c, nil
}

// pairMAC binds a proof to both nonces and both peer IDs, so it is worthless for any other
// session or pair of devices, and to a role, so the inviter's answer cannot be reflected.
func pairMAC(secret []byte, role string, nonceA, nonceB []byte, inviter, joiner peer.ID) []byte {
	h := hmac.New(sha256.New, secret)
	for _, part := range [][]byte{[]byte("memnode/pair/v1/" + role), nonceA, nonceB, []byte(inviter), []byte(joiner)} {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(part)))])
		h.Write(part)
	}
	return h.Sum(nil)
}

// pendingInvite is an invite the inviter holds in memory only: a restart cancels it.
type pendingInvite struct {
	secret  [secretLen]byte
	expires time.Time
}

func (p pendingInvite) String() string {
	return fmt.Sprintf("invite(expires %s)", p.expires.Format(time.RFC3339))
}
