package team

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Team-wide ops live in team_ops under the project "" (no project can be named so), signed
// by an admin: an admin change or a membership change, its RecordID the device it adds or
// removes. See DESIGN.md, "Admins" and "Members".
const (
	adminStream      = ""
	kindAdminAdd     = "admin-add"
	kindAdminRemove  = "admin-remove"
	kindMemberAdd    = "member-add"
	kindMemberRemove = "member-remove"
)

// Errors of `memnode team admin` and `memnode team remove`, and of a device the team has
// not admitted (yet) or removed.
var (
	ErrNotAdmin      = errors.New("this device is not a team admin: ask an admin to run `memnode team admin add`")
	ErrUnknownMember = errors.New("no team member has that name: see `memnode team status` on the device")
	ErrLastAdmin     = errors.New("a team keeps at least one admin: add another before removing this one")
	ErrNameTaken     = errors.New("another device of the team holds this name")
	ErrNotAdmitted   = errors.New("waiting for a team admin's node to admit this device (it admits a new device under a name no other device holds, within seconds while it runs)")
	ErrRemoved       = errors.New("this device was removed from the team by an admin: nothing is pushed or pulled any more (what was pulled stays here; `memnode team leave --purge` forgets it)")
)

// AdminChange is what `memnode team admin add|remove` and `memnode team remove` did.
type AdminChange struct {
	Device  string   `json:"device"`  // the device ID added or removed
	Name    string   `json:"name"`    // its user/device name
	Changed bool     `json:"changed"` // false: it already was (add) or was not (remove) an admin / a member
	Admins  []string `json:"admins"`  // the team's admins afterwards, by name
	Pos     int64    `json:"pos,omitempty"`
}

// adminPayload is a team-wide op's payload: the device and the name it goes by (for a
// member-add, the name its ops must carry).
type adminPayload struct {
	V      int    `json:"v"`
	Device string `json:"device"`
	Name   string `json:"name"`
}

// adminEntry is one accepted team-wide change, at its position on the cluster.
type adminEntry struct {
	pos    int64
	kind   string
	target string
	name   string
}

// adminLog is the founders pinned at join plus every accepted team-wide change in position
// order: the admins and the registered members at any position of the op-log, the same on
// every member.
type adminLog struct {
	founders []string
	entries  []adminEntry
}

// at is the admin set in force for an op at pos: the changes before it applied in order; a
// removed member is no admin.
func (l adminLog) at(pos int64) []string {
	out := slices.Clone(l.founders)
	for _, e := range l.entries {
		if e.pos >= pos {
			break
		}
		switch e.kind {
		case kindAdminAdd:
			if !slices.Contains(out, e.target) {
				out = append(out, e.target)
			}
		case kindAdminRemove, kindMemberRemove:
			out = slices.DeleteFunc(out, func(o string) bool { return o == e.target })
		}
	}
	return out
}

// now is the admin set after every accepted change.
func (l adminLog) now() []string { return l.at(l.last() + 1) }

func (l adminLog) last() int64 {
	if len(l.entries) == 0 {
		return 0
	}
	return l.entries[len(l.entries)-1].pos
}

// member is origin's registration for an op at pos: the name it was admitted under, or
// why its ops are refused there (never admitted, or removed at a position before pos).
func (l adminLog) member(origin string, pos int64) (name, refusal string) {
	removed := int64(0)
	for _, e := range l.entries {
		if e.pos >= pos {
			break
		}
		if e.target != origin {
			continue
		}
		switch e.kind {
		case kindMemberAdd:
			name = e.name
		case kindMemberRemove:
			removed = e.pos
		}
	}
	switch {
	case removed > 0:
		return "", fmt.Sprintf("device %s was removed from the team at position %d", origin, removed)
	case name == "":
		return "", fmt.Sprintf("device %s is not a registered team member", origin)
	}
	return name, ""
}

// holder is the device that holds name before pos (admitted, or removed: a removed
// member's name is not given to another key), or "".
func (l adminLog) holder(name string, pos int64) string {
	for _, e := range l.entries {
		if e.pos >= pos {
			break
		}
		if e.kind == kindMemberAdd && e.name == name {
			return e.target
		}
	}
	return ""
}

// everAdmitted reports whether origin was admitted before pos (it may be removed since).
func (l adminLog) everAdmitted(origin string, pos int64) bool {
	for _, e := range l.entries {
		if e.pos < pos && e.kind == kindMemberAdd && e.target == origin {
			return true
		}
	}
	return false
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// loadAdmins reads the admin log through q: the state's one connection, or the
// transaction holding it.
func (t *Team) loadAdmins(ctx context.Context, q querier) (adminLog, error) {
	var l adminLog
	rows, err := q.QueryContext(ctx, `SELECT 0, 'founders', value, '' FROM config WHERE key = 'admins'
		UNION ALL SELECT pos, action, target, name FROM admin_log ORDER BY 1`)
	if err != nil {
		return l, fmt.Errorf("read admins: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e adminEntry
		if err := rows.Scan(&e.pos, &e.kind, &e.target, &e.name); err != nil {
			return l, fmt.Errorf("read admins: %w", err)
		}
		if e.kind == "founders" {
			l.founders = splitList(e.target)
			continue
		}
		l.entries = append(l.entries, e)
	}
	return l, rows.Err()
}

// currentAdmins is the admin set as this device knows it now.
func (t *Team) currentAdmins(ctx context.Context) []string { return t.roster(ctx).now() }

// roster is the admin log as this device knows it now.
func (t *Team) roster(ctx context.Context) adminLog {
	l, err := t.loadAdmins(ctx, t.st.db)
	if err != nil {
		t.cfg.Logger.Warn("team admins", "err", err)
	}
	return l
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
		st(`SELECT pos, origin, tseq, project, kind, record_id, hlc, `+sqlCappedPayload+`, payload_hash, author, sig, length(payload)
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
	if err := recoverMemberPayloads(ctx, c, ops); err != nil {
		return 0, err
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
		reason, noop := checkAdminOp(op, log)
		if noop {
			continue // a device admitted twice (two admins at once): the first stands
		}
		if reason != "" {
			if _, err := tx.ExecContext(ctx, sqlReject,
				op.Pos, op.Origin, op.TSeq, op.Kind, op.RecordID, reason); err != nil {
				return 0, err
			}
			t.cfg.Logger.Warn("team admin change rejected", "origin", op.Origin, "kind", op.Kind, "device", op.RecordID, "reason", reason)
			continue
		}
		name := payloadName(op)
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO admin_log(pos, signer, action, target, name) VALUES (?, ?, ?, ?, ?)`,
			op.Pos, op.Origin, op.Kind, op.RecordID, name); err != nil {
			return 0, err
		}
		log.entries = append(log.entries, adminEntry{pos: op.Pos, kind: op.Kind, target: op.RecordID, name: name})
	}
	if _, err := tx.ExecContext(ctx, sqlCursor,
		adminStream, ops[len(ops)-1].Pos); err != nil {
		return 0, err
	}
	return high, tx.Commit()
}

// recoverMemberPayloads gives back a member-add whose payload someone with write access
// nulled: the name is the one the device signed into its team_members row, and the
// payload the admin signed is exactly adminPayload{1, device, name} — kept only when its
// hash is the signed one. Without it, members joining later would refuse every op of that
// device.
func recoverMemberPayloads(ctx context.Context, c *rq, ops []Op) error {
	for i, op := range ops {
		if op.Payload != nil || op.Oversize > 0 || op.Kind != kindMemberAdd {
			continue
		}
		res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT author FROM team_members WHERE origin = ?`, op.RecordID)})
		if err != nil {
			return err
		}
		for _, row := range res[0].Values {
			p, err := json.Marshal(adminPayload{V: 1, Device: op.RecordID, Name: strOf(row[0])})
			if err == nil && hashPayload(p) == op.PayloadHash {
				ops[i].Payload = p
			}
		}
	}
	return nil
}

// payloadName is the name a team-wide op's payload gives its device ("" when unreadable).
func payloadName(op Op) string {
	var p adminPayload
	if json.Unmarshal(op.Payload, &p) != nil || p.Device != op.RecordID {
		return ""
	}
	return p.Name
}

// checkAdminOp returns why a team-wide op must be refused, or "", judged by the log of the
// changes before its position: it is signed by its origin, that origin is an admin in
// force there, it names a device, it does not remove the last admin; an admin added is a
// member; a member added has a name no other device holds (a removed one's included) and
// was never removed; a member removed is one. noop: the device was admitted already under
// that name (two admins admitted it at once), nothing to apply.
func checkAdminOp(op Op, log adminLog) (reason string, noop bool) {
	if err := verify(op); err != nil {
		return err.Error(), false
	}
	admins := log.at(op.Pos)
	switch op.Kind {
	case kindAdminAdd, kindAdminRemove, kindMemberAdd, kindMemberRemove:
	default:
		return fmt.Sprintf("unknown team-wide op %q", op.Kind), false
	}
	if !slices.Contains(admins, op.Origin) {
		return fmt.Sprintf("%s from %s, who is not an admin", op.Kind, op.Origin), false
	}
	if _, err := peer.Decode(op.RecordID); err != nil {
		return fmt.Sprintf("%s names %q, not a device ID", op.Kind, op.RecordID), false
	}
	lastAdmin := len(admins) == 1 && admins[0] == op.RecordID
	name, refusal := log.member(op.RecordID, op.Pos)
	switch op.Kind {
	case kindAdminAdd:
		if refusal != "" {
			return "admin-add: " + refusal, false
		}
	case kindAdminRemove:
		if lastAdmin {
			return "admin change would leave the team without an admin", false
		}
	case kindMemberRemove:
		if refusal != "" {
			return "member-remove: " + refusal, false
		}
		if lastAdmin {
			return "member-remove would leave the team without an admin", false
		}
	case kindMemberAdd:
		want := payloadName(op)
		switch {
		case !validName(want):
			return fmt.Sprintf("member-add of %s names no user/device (%q)", op.RecordID, want), false
		case refusal == "" && name == want:
			return "", true
		case refusal == "":
			return fmt.Sprintf("member-add of %s as %q: it is registered as %q", op.RecordID, want, name), false
		case log.everAdmitted(op.RecordID, op.Pos):
			return "member-add: " + refusal + "; a removed device stays removed (it joins again with a new device key)", false
		}
		if h := log.holder(want, op.Pos); h != "" {
			return fmt.Sprintf("member-add of %s as %q: the name is held by device %s", op.RecordID, want, h), false
		}
	}
	return "", false
}

// validName reports whether name is a user/device name as join makes them.
func validName(name string) bool {
	u, d, ok := strings.Cut(name, "/")
	return ok && u != "" && d != "" && !strings.ContainsAny(name, "\n\r")
}

// Admin adds (add) or removes a team admin: who is a member's "@user/device" or device ID.
// The change is an op signed by this device, which must be an admin; every member checks
// it and applies it at its position in the op-log (a tombstone before it is judged by the
// admins before it).
func (t *Team) Admin(ctx context.Context, add bool, who string) (AdminChange, error) {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	c, admins, err := t.asAdmin(ctx, "team admin")
	if err != nil {
		return AdminChange{}, err
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
	if add {
		if _, refusal := t.roster(ctx).member(target, math.MaxInt64); refusal != "" {
			return AdminChange{}, fmt.Errorf("team admin: %s", refusal)
		}
	}
	kind := kindAdminRemove
	if add {
		kind = kindAdminAdd
	}
	if err := t.writeTeamOps(ctx, c, kind, []adminPayload{{V: 1, Device: target, Name: name}}); err != nil {
		return AdminChange{}, fmt.Errorf("team admin: %w", err)
	}
	ch.Changed, ch.Admins = true, t.adminNames(ctx, t.currentAdmins(ctx))
	return ch, nil
}

// Remove takes a member out of the team (admin only): who is "@user/device" or a device
// ID. The removal is a signed op; its position on the cluster is the cut-off every member
// applies: that device's ops after it are refused everywhere, whoever's cluster
// credentials wrote them, and the device is never admitted again. The cluster credentials
// are the operator's side (README, "Removing a member").
func (t *Team) Remove(ctx context.Context, who string) (AdminChange, error) {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	c, admins, err := t.asAdmin(ctx, "team remove")
	if err != nil {
		return AdminChange{}, err
	}
	target, name, err := t.resolveMember(ctx, c, who)
	if err != nil {
		return AdminChange{}, fmt.Errorf("team remove: %w", err)
	}
	ch := AdminChange{Device: target, Name: name}
	log := t.roster(ctx)
	if _, refusal := log.member(target, math.MaxInt64); refusal != "" {
		ch.Admins = t.adminNames(ctx, admins)
		if log.everAdmitted(target, math.MaxInt64) {
			return ch, nil // removed already
		}
		return AdminChange{}, fmt.Errorf("team remove: %s", refusal)
	}
	if len(admins) == 1 && admins[0] == target {
		return AdminChange{}, ErrLastAdmin
	}
	if err := t.writeTeamOps(ctx, c, kindMemberRemove, []adminPayload{{V: 1, Device: target, Name: name}}); err != nil {
		return AdminChange{}, fmt.Errorf("team remove: %w", err)
	}
	log = t.roster(ctx)
	for _, e := range log.entries {
		if e.kind == kindMemberRemove && e.target == target {
			ch.Pos = e.pos
		}
	}
	if ch.Pos == 0 {
		return AdminChange{}, errors.New("team remove: the cluster did not take the removal (see `memnode team status`)")
	}
	ch.Changed, ch.Admins = true, t.adminNames(ctx, log.now())
	return ch, nil
}

// asAdmin reads the team-wide changes and returns the client and the admins now, or
// ErrNotAdmin when this device is not one of them. The caller holds syncMu.
func (t *Team) asAdmin(ctx context.Context, what string) (*rq, []string, error) {
	c, err := t.client()
	if err != nil {
		return nil, nil, err
	}
	if _, err := t.pullAdmins(ctx, c); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	admins := t.currentAdmins(ctx)
	if !slices.Contains(admins, t.origin) {
		return nil, nil, ErrNotAdmin
	}
	return c, admins, nil
}

// writeTeamOps signs one team-wide op of kind per target, writes them in one batch at the
// next numbers of this device's team-wide stream, and reads the stream back so this
// device's log has them.
func (t *Team) writeTeamOps(ctx context.Context, c *rq, kind string, targets []adminPayload) error {
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT COALESCE(MAX(tseq), 0) FROM team_ops WHERE origin = ? AND project = ?`, t.origin, adminStream)})
	if err != nil {
		return err
	}
	last, err := res[0].scalar()
	if err != nil {
		return err
	}
	author, _ := t.st.get(ctx, "author")
	ops := make([]Op, 0, len(targets))
	for i, p := range targets {
		// The payload names the device as the admin resolved it, for every member's status
		// (and, for a member-add, the name its ops must carry).
		payload, err := json.Marshal(p)
		if err != nil {
			return err
		}
		op := Op{Origin: t.origin, TSeq: uint64(last) + 1 + uint64(i), Project: adminStream, Kind: kind, RecordID: p.Device, Payload: payload, Author: author}
		if err := sign(t.cfg.Key, &op); err != nil {
			return err
		}
		ops = append(ops, op)
	}
	if _, err := c.execute(ctx, pushStatements(ops)); err != nil {
		return err
	}
	_, err = t.pullAdmins(ctx, c)
	return err
}

// Admit registers, with ops signed by this admin device, every device that joined the
// cluster (a team_members row signed by its own key) and is not a member yet, under the
// name it asked for — unless that name is held by another device or the device was
// removed. An admin's node runs it while it pulls; it returns the names admitted.
func (t *Team) Admit(ctx context.Context) ([]string, error) {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	c, _, err := t.asAdmin(ctx, "team admit")
	if err != nil {
		return nil, err
	}
	return t.admit(ctx, c)
}

// admit is Admit with syncMu held and the admin log just read.
func (t *Team) admit(ctx context.Context, c *rq) ([]string, error) {
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT origin, author, sig FROM team_members ORDER BY joined_at, origin`)})
	if err != nil {
		return nil, err
	}
	log := t.roster(ctx)
	taken := map[string]bool{}
	var add []adminPayload
	var names []string
	for _, row := range res[0].Values {
		origin, name := strOf(row[0]), strOf(row[1])
		if !validName(name) || verifyMember(origin, name, strOf(row[2])) != nil {
			continue
		}
		if _, refusal := log.member(origin, math.MaxInt64); refusal == "" || log.everAdmitted(origin, math.MaxInt64) {
			continue // a member, or removed
		}
		if log.holder(name, math.MaxInt64) != "" || taken[name] {
			continue // two keys, one name: the first keeps it (status shows the other waiting)
		}
		taken[name] = true
		add = append(add, adminPayload{V: 1, Device: origin, Name: name})
		names = append(names, name)
	}
	if len(add) == 0 {
		return nil, nil
	}
	if err := t.writeTeamOps(ctx, c, kindMemberAdd, add); err != nil {
		return nil, fmt.Errorf("team admit: %w", err)
	}
	t.cfg.Logger.Info("team members admitted", "names", names)
	return names, nil
}

// membership is this device's standing now: nil when it is a member, ErrRemoved, or
// ErrNotAdmitted (after reading the team-wide changes once more).
func (t *Team) membership(ctx context.Context, c *rq) error {
	standing := func() error {
		log := t.roster(ctx)
		switch _, refusal := log.member(t.origin, math.MaxInt64); {
		case refusal == "":
			return nil
		case log.everAdmitted(t.origin, math.MaxInt64):
			return ErrRemoved
		}
		return ErrNotAdmitted
	}
	if err := standing(); !errors.Is(err, ErrNotAdmitted) {
		return err
	}
	if _, err := t.pullAdmins(ctx, c); err != nil {
		return err
	}
	return standing()
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
