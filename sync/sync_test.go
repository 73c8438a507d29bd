package sync

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

func TestIdentityPersistsAndIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "identity.key")
	_, id1, err := LoadOrCreateIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	_, id2, err := LoadOrCreateIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	if id1 != id2 {
		t.Fatalf("identity changed across loads: %s then %s", id1, id2)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("identity file mode %v, want 0600", fi.Mode().Perm())
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateIdentity(path); err == nil {
		t.Fatal("a corrupt identity must be an error, not silently replaced")
	}
}

func TestInviteCodeRoundTripAndTamper(t *testing.T) {
	a := startNode(t, "a", t.TempDir(), nil)
	code, err := a.node.Invite(5 * time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseInvite(strings.ToLower(code[:10]) + "-" + code[10:])
	if err != nil {
		t.Fatalf("a code typed in lower case with a dash must parse: %v", err)
	}
	if c.Inviter != a.node.ID() || c.Expires.Before(time.Now().Add(4*time.Minute)) {
		t.Fatalf("decoded %+v", c)
	}
	// One changed character breaks the checksum.
	bad := []byte(code)
	i := len(bad) / 2
	bad[i] = map[bool]byte{true: 'B', false: 'A'}[bad[i] == 'A']
	if _, err := parseInvite(string(bad)); !errors.Is(err, ErrInviteMalformed) {
		t.Fatalf("tampered code: %v, want ErrInviteMalformed", err)
	}
	for _, s := range []string{"", "MN1", "hello", "MN1AAAA", code + "A"} {
		if _, err := parseInvite(s); err == nil {
			t.Fatalf("parseInvite(%q) succeeded", s)
		}
	}
}

func TestGroupMergeIsACRDT(t *testing.T) {
	key := func(b byte) []byte { k := make([]byte, 32); k[0] = b; return k }
	base := groupState{GroupID: "g", KeyEpoch: 1, Key: key(1), Members: map[string]Member{"a": {PeerID: "a", Name: "a", Updated: 1}}, Removed: map[string]int64{}}
	x := base.clone()
	x.Members["b"] = Member{PeerID: "b", Name: "b", Updated: 2}
	y := base.clone()
	y.Members["c"] = Member{PeerID: "c", Name: "c", Updated: 3}
	y.Removed["b"] = 5
	y.Cuts = map[string]uint64{"b": 7}
	y.KeyEpoch, y.Key = 2, key(2)
	z := base.clone()
	z.Members["a"] = Member{PeerID: "a", Name: "laptop", Updated: 9}
	z.KeyEpoch, z.Key = 2, key(3) // concurrent rotation: the larger key wins everywhere
	z.Removed["b"] = 6
	z.Cuts = map[string]uint64{"b": 9} // a concurrent removal that knew more: the max cut wins

	fold := func(states ...groupState) string {
		acc := states[0].clone()
		for _, s := range states[1:] {
			if _, err := acc.merge(s.clone()); err != nil {
				t.Fatal(err)
			}
		}
		return fmt.Sprintf("%d %x %v %v %v", acc.KeyEpoch, acc.Key[:1], acc.Members, acc.Removed, acc.Cuts)
	}
	want := fold(x, y, z)
	for _, order := range [][]groupState{{y, x, z}, {z, y, x}, {x, z, y, x, y}, {z, z, x, y, y}} {
		if got := fold(order...); got != want {
			t.Fatalf("merge depends on order:\n%s\n%s", want, got)
		}
	}
	if !strings.Contains(want, "laptop") || strings.Contains(want, "b:{b") || !strings.HasPrefix(want, "2 03") || !strings.HasSuffix(want, "map[b:9]") {
		t.Fatalf("unexpected merge result %s", want)
	}
	other := base.clone()
	other.GroupID = "h"
	if _, err := x.merge(other); !errors.Is(err, ErrOtherGroup) {
		t.Fatalf("merging another group: %v", err)
	}
}

func TestPairReplicateBothWaysAndNeverLogSecrets(t *testing.T) {
	checkGoroutines(t)
	logs := &logBuf{}
	a := startNode(t, "laptop", t.TempDir(), logs)
	b := startNode(t, "desktop", t.TempDir(), logs)

	code, err := a.node.Invite(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := parseInvite(code)
	if err := b.node.Join(context.Background(), code); err != nil {
		t.Fatal(err)
	}
	a.write("s-a", "kangaroo migration patterns")
	b.write("s-b", "wombat burrow depth")
	waitFor(t, 10*time.Second, "both records searchable on both devices", func() (bool, string) {
		ka, wa, kb, wb := a.searchCount("kangaroo"), a.searchCount("wombat"), b.searchCount("kangaroo"), b.searchCount("wombat")
		return ka == 1 && wa == 1 && kb == 1 && wb == 1, fmt.Sprint(ka, wa, kb, wb)
	})
	converged(t, 10*time.Second, a, b)

	// Each record keeps its origin device, and device names replicate.
	dump := a.dump()
	for _, want := range []string{a.node.ID().String(), b.node.ID().String(), "laptop", "desktop"} {
		if !strings.Contains(dump, want) {
			t.Fatalf("dump lacks %q:\n%s", want, dump)
		}
	}
	waitFor(t, 10*time.Second, "gossip to see both alive", func() (bool, string) {
		s1, s2 := a.deviceState(b), b.deviceState(a)
		return s1 == StateAlive && s2 == StateAlive, s1 + " " + s2
	})
	st := a.status()
	if len(st.Devices) != 2 || !st.Devices[0].Self || st.Devices[0].Name != "laptop" || st.PendingInvites != 0 {
		t.Fatalf("status: %+v", st)
	}
	waitFor(t, 10*time.Second, "b to report 0 ops behind", func() (bool, string) {
		for _, d := range a.status().Devices {
			if !d.Self {
				return d.Behind == 0 && d.Ahead == 0 && d.LastSync != nil, fmt.Sprintf("%+v", d)
			}
		}
		return false, "no peer"
	})
	// Caught up, as peers, status and the viewer show it: compared, held == known, > 0.
	if st := b.status(); st.OpsHeld == 0 || st.OpsHeld != st.OpsKnown || !st.Devices[1].Compared && !st.Devices[0].Compared {
		t.Errorf("after sync b's catch-up: %d of %d ops, devices %+v", st.OpsHeld, st.OpsKnown, st.Devices)
	}

	a.stop()
	b.stop()
	out := logs.String()
	secretHex := hex.EncodeToString(parsed.Secret[:])
	secretB64 := base64.StdEncoding.EncodeToString(parsed.Secret[:])
	g, _, _ := loadState(filepath.Join(a.dir, "group.json"))
	if contains(out, code, code[3:20], secretHex, secretB64, hex.EncodeToString(g.Group.Key), base64.StdEncoding.EncodeToString(g.Group.Key)) {
		t.Fatal("an invite code, invite secret or group key reached the log")
	}
	if !strings.Contains(out, "device paired") || !strings.Contains(out, "joined group") {
		t.Fatalf("the log should record the pairing (without secrets):\n%s", out)
	}
	fi, err := os.Stat(filepath.Join(a.dir, "group.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("group.json must be 0600: %v %v", fi.Mode(), err)
	}
}

func TestThreeDevicesRelayForgetAndRemove(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "a", t.TempDir(), nil)
	b := startNode(t, "b", t.TempDir(), nil)
	c := startNode(t, "c", t.TempDir(), nil)
	b.join(a)
	c.join(a)
	waitFor(t, 15*time.Second, "all three to see each other alive", func() (bool, string) {
		s := []string{a.deviceState(b), a.deviceState(c), b.deviceState(c), c.deviceState(b)}
		for _, x := range s {
			if x != StateAlive {
				return false, fmt.Sprint(s)
			}
		}
		return true, ""
	})
	ids := map[string]string{}
	for _, n := range []*tnode{a, b, c} {
		ids[n.name] = n.write("s-"+n.name, "platypus "+n.name)
	}
	waitFor(t, 15*time.Second, "every record on every device", func() (bool, string) {
		counts := []int{a.searchCount("platypus"), b.searchCount("platypus"), c.searchCount("platypus")}
		return counts[0] == 3 && counts[1] == 3 && counts[2] == 3, fmt.Sprint(counts)
	})
	converged(t, 10*time.Second, a, b, c)

	// Forget on b removes c's record everywhere, op-log payloads included.
	if _, err := b.rep.Forget(context.Background(), []string{ids["c"]}); err != nil {
		t.Fatal(err)
	}
	b.node.NotifyLocalWrite()
	waitFor(t, 15*time.Second, "forget to reach every device", func() (bool, string) {
		for _, n := range []*tnode{a, b, c} {
			has, _ := n.rep.OpPayloadContains(context.Background(), "platypus c")
			if n.searchCount("platypus") != 2 || has {
				return false, n.name + " still has it"
			}
		}
		return true, ""
	})

	// Remove c: the key rotates on a and b, c is refused and gets nothing new.
	oldKey := c.node.group().Key
	if _, err := a.node.Remove(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.node.Remove(context.Background(), a.node.ID().String()); !errors.Is(err, ErrRemoveSelf) {
		t.Fatalf("removing self: %v", err)
	}
	waitFor(t, 10*time.Second, "b to learn of the removal and the new key", func() (bool, string) {
		gb := b.node.group()
		_, removed := gb.Removed[c.node.ID().String()]
		return removed && string(gb.Key) != string(oldKey) && string(gb.Key) == string(a.node.group().Key), fmt.Sprint(removed)
	})
	newKey := a.node.group().Key
	for _, n := range []*tnode{a, b} {
		waitFor(t, 5*time.Second, n.name+"'s keyring to hold only the new key", func() (bool, string) {
			keys := n.node.keys.GetKeys()
			return len(keys) == 1 && string(keys[0]) == string(newKey) && string(keys[0]) != string(oldKey), fmt.Sprint(len(keys), " keys")
		})
	}
	a.write("s-a", "echidna after removal")
	c.write("s-c", "quokka from the removed device")
	waitFor(t, 10*time.Second, "b to get a's new record", func() (bool, string) {
		return b.searchCount("echidna") == 1, ""
	})
	waitFor(t, 10*time.Second, "gossip to declare c dead on a", func() (bool, string) {
		s := a.deviceState(c)
		return s == "absent", s
	})
	// c keeps trying (its own anti-entropy and join loops) but is refused everywhere.
	c.node.syncAll(context.Background(), true)
	err := c.node.runSession(context.Background(), a.node.ID())
	if err == nil {
		t.Fatal("a removed device opened a sync session")
	}
	if c.searchCount("echidna") != 0 || a.searchCount("quokka") != 0 || b.searchCount("quokka") != 0 {
		t.Fatal("data crossed to or from a removed device")
	}
}

func TestForgedExpiredAndReusedCodesGetNothing(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "a", t.TempDir(), nil)
	b := startNode(t, "b", t.TempDir(), nil)
	x := startNode(t, "intruder", t.TempDir(), nil)
	a.write("s-a", "confidential dingo")

	// Forged: right inviter and address, guessed secret.
	code, err := a.node.Invite(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := parseInvite(code)
	forged := real
	if _, err := rand.Read(forged.Secret[:]); err != nil {
		t.Fatal(err)
	}
	if err := x.node.Join(context.Background(), forged.String()); !errors.Is(err, ErrInviteRejected) {
		t.Fatalf("forged code: %v, want ErrInviteRejected", err)
	}
	// The failed attempt did not burn the genuine invite; b uses it, then it is spent.
	if err := b.node.Join(context.Background(), code); err != nil {
		t.Fatal(err)
	}
	// With no invite pending, a stranger's connection is refused outright by the gater.
	if err := x.node.Join(context.Background(), code); !errors.Is(err, ErrInviterUnreachable) {
		t.Fatalf("reused code: %v, want ErrInviterUnreachable", err)
	}
	// Expired on the inviter's clock (the joiner's clock is behind: the inviter decides).
	code2, err := a.node.Invite(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(2 * time.Minute)
	if _, err := a.node.Invite(10 * time.Minute); err != nil { // keeps pairing open, for someone else
		t.Fatal(err)
	}
	if err := x.node.Join(context.Background(), code2); !errors.Is(err, ErrInviteRejected) {
		t.Fatalf("code expired at the inviter: %v, want ErrInviteRejected", err)
	}
	// Expired on the joiner's clock: refused before dialling.
	x.clock.Advance(2 * time.Minute)
	if err := x.node.Join(context.Background(), code2); !errors.Is(err, ErrInviteExpired) {
		t.Fatalf("expired code: %v, want ErrInviteExpired", err)
	}
	if _, err := parseInvite("MN1" + strings.Repeat("A", 60)); !errors.Is(err, ErrInviteMalformed) {
		t.Fatalf("garbage code: %v", err)
	}
	waitFor(t, 10*time.Second, "b to receive a's record", func() (bool, string) { return b.searchCount("dingo") == 1, "" })
	if x.searchCount("dingo") != 0 {
		t.Fatal("the intruder received data")
	}
	if err := x.node.runSession(context.Background(), a.node.ID()); err == nil {
		t.Fatal("a non-member opened a sync session")
	}
	if g := a.node.group(); g.isMember(x.node.ID().String()) || len(g.Members) != 2 {
		t.Fatalf("the intruder is in the group: %v", g.Members)
	}
	if g := x.node.group(); len(g.Members) != 1 {
		t.Fatalf("the intruder learnt the member list: %v", g.Members)
	}
}

func TestCatchUpAfterRestart(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "a", t.TempDir(), nil)
	b := startNode(t, "b", t.TempDir(), nil)
	c := startNode(t, "c", t.TempDir(), nil)
	b.join(a)
	c.join(a)
	a.write("s-a", "before the outage")
	waitFor(t, 10*time.Second, "first record on c", func() (bool, string) { return c.searchCount("outage") == 1, "" })

	c.stop()
	waitFor(t, 10*time.Second, "a to see c gone", func() (bool, string) {
		s := a.deviceState(c)
		return s == StateDead, s
	})
	for i := range 30 {
		a.write("s-a", fmt.Sprintf("lyrebird song %d", i))
		b.write("s-b", fmt.Sprintf("lyrebird dance %d", i))
	}
	c.restart()
	waitFor(t, 15*time.Second, "c to catch up", func() (bool, string) {
		n := c.searchCount("lyrebird")
		return n == 60, fmt.Sprint(n)
	})
	converged(t, 10*time.Second, a, b, c)
	waitFor(t, 10*time.Second, "gossip to see c alive again", func() (bool, string) {
		s := b.deviceState(c)
		return s == StateAlive, s
	})
}

func TestCloseIsIdempotentAndStartAfterCloseFails(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "a", t.TempDir(), nil)
	n := a.node
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := n.Invite(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("invite after close: %v", err)
	}
	if err := n.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("start after close: %v", err)
	}
}

func TestOpsRelayThroughAMember(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "a", t.TempDir(), nil)
	b := startNode(t, "b", t.TempDir(), nil)
	c := startNode(t, "c", t.TempDir(), nil)
	b.join(a)
	c.join(a)
	waitFor(t, 10*time.Second, "b and c to know each other", func() (bool, string) {
		return b.node.group().isMember(c.id.String()) && c.node.group().isMember(b.id.String()), ""
	})
	// b and c cannot reach each other; only a links them.
	b.node.setCut([]peer.ID{c.id})
	c.node.setCut([]peer.ID{b.id})
	id := c.write("s-c", "numbat relayed")
	waitFor(t, 10*time.Second, "c's record to reach b through a", func() (bool, string) {
		return b.searchCount("numbat") == 1, fmt.Sprint(b.searchCount("numbat"))
	})
	if _, err := b.rep.Forget(context.Background(), []string{id}); err != nil {
		t.Fatal(err)
	}
	b.node.NotifyLocalWrite()
	waitFor(t, 10*time.Second, "b's forget to reach c through a", func() (bool, string) {
		has, _ := c.rep.OpPayloadContains(context.Background(), "numbat")
		return c.searchCount("numbat") == 0 && !has, ""
	})
	converged(t, 10*time.Second, a, b, c)
	if n := b.node.host.Network().ConnsToPeer(c.id); len(n) != 0 {
		t.Fatalf("b holds %d connections to c despite the partition", len(n))
	}
}
