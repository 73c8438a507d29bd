package team

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Team-wide ops live in team_ops under the project "" (no project can be named so): an
// admin change, its RecordID the device it adds or removes, signed by an admin. See
// DESIGN.md, "Admins".
const (
	adminStream     = ""
	kindAdminAdd    = "admin-add"
	kindAdminRemove = "admin-remove"
)

// Errors of `memnode team admin`.
var (
	ErrNotAdmin      = errors.New("this device is not a team admin: ask an admin to run `memnode team admin add`")
	ErrUnknownMember = errors.New("no team member has that name: see `memnode team status` on the device")
	ErrLastAdmin     = errors.New("a team keeps at least one admin: add another before removing this one")
)

// AdminChange is what `memnode team admin add|remove` did.
type AdminChange struct {
	Device  string   `json:"device"`  // the device ID added or removed
	Name    string   `json:"name"`    // its user/device name
	Changed bool     `json:"changed"` // false: it already was (add) or was not (remove) an admin
	Admins  []string `json:"admins"`  // the team's admins afterwards, by name
}

// adminPayload is an admin change's payload: the device and the name it goes by.
type adminPayload struct {
	V      int    `json:"v"`
	Device string `json:"device"`
	Name   string `json:"name"`
}

// adminEntry is one accepted admin change, at its position on the cluster.
type adminEntry struct {
	pos    int64
	add    bool
	target string
}

// adminLog is the founders pinned at join plus every accepted admin change in position
// order: the admins at any position of the op-log, the same on every member.
type adminLog struct {
	founders []string
	entries  []adminEntry
}

// at is the admin set in force for an op at pos: the changes before it applied in order.
func (l adminLog) at(pos int64) []string {
	out := slices.Clone(l.founders)
	for _, e := range l.entries {
		if e.pos >= pos {
			break
		}
		if e.add && !slices.Contains(out, e.target) {
			out = append(out, e.target)
		} else if !e.add {
			out = slices.DeleteFunc(out, func(o string) bool { return o == e.target })
		}
	}
	return out
}

// now is the admin set after every accepted change.
func (l adminLog) now() []string {
	if len(l.entries) == 0 {
		return slices.Clone(l.founders)
	}
	return l.at(l.entries[len(l.entries)-1].pos + 1)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// loadAdmins reads the admin log through q: the state's one connection, or the
// transaction holding it.
func (t *Team) loadAdmins(ctx context.Context, q querier) (adminLog, error) {
	var l adminLog
	rows, err := q.QueryContext(ctx, `SELECT 0, 'founders', value FROM config WHERE key = 'admins'
		UNION ALL SELECT pos, action, target FROM admin_log ORDER BY 1`)
	if err != nil {
		return l, fmt.Errorf("read admins: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e adminEntry
		var action string
		if err := rows.Scan(&e.pos, &action, &e.target); err != nil {
			return l, fmt.Errorf("read admins: %w", err)
		}
		if action == "founders" {
			l.founders = splitList(e.target)
			continue
		}
		e.add = action == kindAdminAdd
		l.entries = append(l.entries, e)
	}
	return l, rows.Err()
}

// currentAdmins is the admin set as this device knows it now.
func (t *Team) currentAdmins(ctx context.Context) []string {
	l, err := t.loadAdmins(ctx, t.st.db)
	if err != nil {
		t.cfg.Logger.Warn("team admins", "err", err)
	}
	return l.now()
}

// pullAdmins reads the team-wide admin changes past their cursor and applies those signed
// by an admin in force at their position. It returns the op-log's last position when it
// read them: the project pulls stop there, so every tombstone they judge comes after
// admin changes this device already knows.
func (t *Team) pullAdmins(ctx context.Context, c *rq) (int64, error) {
	var cursor int64
	if err := t.st.db.QueryRowContext(ctx, `SELECT pos FROM cursors WHERE project = ?`, adminStream).Scan(&cursor); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	// Positions are assigned in Raft order: every row below the maximum read first is
	// visible to the second statement.
	res, err := c.query(ctx, levelWeak, []stmt{
		st(`SELECT COALESCE(MAX(pos), 0) FROM team_ops`),
		st(`SELECT pos, origin, tseq, project, kind, record_id, hlc, payload, payload_hash, author, sig
			FROM team_ops WHERE project = ? AND pos > ? ORDER BY pos`, adminStream, cursor),
	})
	if err != nil {
		return 0, err
	}
	if len(res) != 2 || len(res[0].Values) == 0 {
		return 0, errors.New("team cluster: short answer to the admin query")
	}
	high, err := int64Of(res[0].Values[0][0])
	if err != nil {
		return 0, err
	}
	ops, err := decodeOps(res[1].Values)
	if err != nil {
		return 0, err
	}
	ops = slices.DeleteFunc(ops, func(op Op) bool { return op.Pos > high })
	if len(ops) == 0 {
		return high, nil
	}
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	log, err := t.loadAdmins(ctx, tx)
	if err != nil {
		return 0, err
	}
	for _, op := range ops {
		if reason := checkAdminOp(op, log.at(op.Pos)); reason != "" {
			if _, err := tx.ExecContext(ctx, sqlReject,
				op.Pos, op.Origin, op.TSeq, op.Kind, op.RecordID, reason); err != nil {
				return 0, err
			}
			t.cfg.Logger.Warn("team admin change rejected", "origin", op.Origin, "kind", op.Kind, "device", op.RecordID, "reason", reason)
			continue
		}
		var p adminPayload
		_ = json.Unmarshal(op.Payload, &p) // signed with the op; only a label
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO admin_log(pos, signer, action, target, name) VALUES (?, ?, ?, ?, ?)`,
			op.Pos, op.Origin, op.Kind, op.RecordID, p.Name); err != nil {
			return 0, err
		}
		log.entries = append(log.entries, adminEntry{pos: op.Pos, add: op.Kind == kindAdminAdd, target: op.RecordID})
	}
	if _, err := tx.ExecContext(ctx, sqlCursor,
		adminStream, ops[len(ops)-1].Pos); err != nil {
		return 0, err
	}
	return high, tx.Commit()
}

// checkAdminOp returns why an admin change must be refused, or "": it is signed by its
// origin, that origin is an admin in force at its position, it names a device, and it
// does not remove the last admin.
func checkAdminOp(op Op, admins []string) string {
	if err := verify(op); err != nil {
		return err.Error()
	}
	if op.Kind != kindAdminAdd && op.Kind != kindAdminRemove {
		return fmt.Sprintf("unknown team-wide op %q", op.Kind)
	}
	if !slices.Contains(admins, op.Origin) {
		return fmt.Sprintf("admin change from %s, who is not an admin", op.Origin)
	}
	if _, err := peer.Decode(op.RecordID); err != nil {
		return fmt.Sprintf("admin change names %q, not a device ID", op.RecordID)
	}
	if op.Kind == kindAdminRemove && len(admins) == 1 && admins[0] == op.RecordID {
		return "admin change would leave the team without an admin"
	}
	return ""
}

// Admin adds (add) or removes a team admin: who is a member's "@user/device" or device ID.
// The change is an op signed by this device, which must be an admin; every member checks
// it and applies it at its position in the op-log (a tombstone before it is judged by the
// admins before it).
func (t *Team) Admin(ctx context.Context, add bool, who string) (AdminChange, error) {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	c, err := t.client()
	if err != nil {
		return AdminChange{}, err
	}
	if _, err := t.pullAdmins(ctx, c); err != nil {
		return AdminChange{}, fmt.Errorf("team admin: %w", err)
	}
	admins := t.currentAdmins(ctx)
	if !slices.Contains(admins, t.origin) {
		return AdminChange{}, ErrNotAdmin
	}
	target, name, err := t.resolveMember(ctx, c, who)
	if err != nil {
		return AdminChange{}, fmt.Errorf("team admin: %w", err)
	}
	ch := AdminChange{Device: target, Name: name}
	if slices.Contains(admins, target) == add {
		ch.Admins = t.adminNames(ctx, admins)
		return ch, nil
	}
	if !add && len(admins) == 1 {
		return AdminChange{}, ErrLastAdmin
	}
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT COALESCE(MAX(tseq), 0) FROM team_ops WHERE origin = ? AND project = ?`, t.origin, adminStream)})
	if err != nil {
		return AdminChange{}, fmt.Errorf("team admin: %w", err)
	}
	if len(res[0].Values) == 0 {
		return AdminChange{}, errors.New("team admin: team cluster: short answer to the sequence query")
	}
	last, err := int64Of(res[0].Values[0][0])
	if err != nil {
		return AdminChange{}, fmt.Errorf("team admin: %w", err)
	}
	author, _ := t.st.get(ctx, "author")
	// The payload names the device as the admin resolved it, for every member's status.
	payload, err := json.Marshal(adminPayload{V: 1, Device: target, Name: name})
	if err != nil {
		return AdminChange{}, err
	}
	op := Op{Origin: t.origin, TSeq: uint64(last) + 1, Project: adminStream, Kind: kindAdminRemove, RecordID: target, Payload: payload, Author: author}
	if add {
		op.Kind = kindAdminAdd
	}
	if err := sign(t.cfg.Key, &op); err != nil {
		return AdminChange{}, err
	}
	if _, err := c.execute(ctx, pushStatements([]Op{op})); err != nil {
		return AdminChange{}, fmt.Errorf("team admin: %w", err)
	}
	if _, err := t.pullAdmins(ctx, c); err != nil {
		return AdminChange{}, fmt.Errorf("team admin: %w", err)
	}
	ch.Changed, ch.Admins = true, t.adminNames(ctx, t.currentAdmins(ctx))
	return ch, nil
}

// resolveMember finds the device a name means: a device ID as is, "@user/device" (or
// "user/device") through the cluster's member list, whose rows are signed by their device.
func (t *Team) resolveMember(ctx context.Context, c *rq, who string) (origin, name string, err error) {
	if id, err := peer.Decode(who); err == nil {
		return id.String(), t.nameOf(ctx, id.String()), nil
	}
	name = strings.TrimPrefix(who, "@")
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT origin, sig FROM team_members WHERE author = ?`, name)})
	if err != nil {
		return "", "", err
	}
	var found []string
	for _, row := range res[0].Values {
		if o := strOf(row[0]); verifyMember(o, name, strOf(row[1])) == nil {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("%w: %q", ErrUnknownMember, who)
	case 1:
		return found[0], name, nil
	}
	return "", "", fmt.Errorf("%d devices are named %q: give the device ID", len(found), who)
}

// verifyMember checks a team_members row's signature (Join signs origin and name).
func verifyMember(origin, author, sig string) error {
	id, err := peer.Decode(origin)
	if err != nil {
		return err
	}
	pub, err := id.ExtractPublicKey()
	if err != nil {
		return err
	}
	return verifySig(pub, memberBytes(origin, author), sig)
}

func memberBytes(origin, author string) []byte {
	return []byte("memnode-team-member/1\n" + origin + "\n" + author)
}

func verifySig(pub crypto.PubKey, msg []byte, sig string) error {
	b, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return ErrBadSignature
	}
	if ok, err := pub.Verify(msg, b); err != nil || !ok {
		return ErrBadSignature
	}
	return nil
}

// nameOf is the user/device name this device knows origin by (its ID when none).
func (t *Team) nameOf(ctx context.Context, origin string) string {
	if origin == t.origin {
		if a, _ := t.st.get(ctx, "author"); a != "" {
			return a
		}
	}
	var a string
	err := t.st.db.QueryRowContext(ctx, `SELECT author FROM authors WHERE origin = ?1
		UNION ALL SELECT name FROM (SELECT name FROM admin_log WHERE target = ?1 AND name != '' ORDER BY pos DESC LIMIT 1)`, origin).Scan(&a)
	if err == nil {
		return a
	}
	return origin
}

func (t *Team) adminNames(ctx context.Context, admins []string) []string {
	out := make([]string, 0, len(admins))
	for _, o := range admins {
		out = append(out, t.nameOf(ctx, o))
	}
	return out
}
