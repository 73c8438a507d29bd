package team

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/store"
)

// Replica is what team needs of the local store: this device's ops to push, and the apply
// path device sync uses for the ops it pulls (same CRDT rules, records stored once).
type Replica interface {
	Origin() string
	OpsSince(ctx context.Context, origin string, after uint64, limit int) ([]store.Op, error)
	VersionVector(ctx context.Context) (store.VersionVector, error)
	ApplyOps(ctx context.Context, ops []store.Op) (store.ApplyResult, error)
}

// Config configures a Team.
type Config struct {
	StatePath string // <data dir>/team.db
	// OpenState opens the state file at StatePath (team/statedb.Open: SQLite). team keeps
	// the schema and the queries; the driver is the caller's, so team links no SQLite.
	OpenState OpenStateFunc
	Replica   Replica           // the local replica
	Key       crypto.PrivKey    // the device identity (sync's identity.key): signs every op
	Device    string            // this device's name, shown as @user/device
	LocalOnly func(string) bool // local_only_projects: never shared
	// Password returns the team user's password (MEMNODE_TEAM_PASSWORD or the key store). It
	// is asked only when this device has joined, so nobody else's keyring is probed.
	Password func() string
	Feed     *feed.Bus // local commits wake the pusher; nil: pushes wait for the tick
	Logger   *slog.Logger
	// Every is how often a member pulls (and retries pushes); default 250ms. rqlite has no
	// change notification, so a member asks; a pull that finds nothing is one indexed query.
	Every time.Duration
	// Batch is the most ops one push carries (one atomic batch on the cluster); default 1000.
	// PullBatch is the most ops one pull query returns; default 2000.
	Batch, PullBatch int
	// PullAhead is how many batches a pull fetches and verifies ahead of the one it applies;
	// default 2, negative: none (each batch is fetched after the previous one is applied).
	PullAhead int
	// VerifyWorkers is how many goroutines verify a pulled batch's signatures; default
	// GOMAXPROCS.
	VerifyWorkers int
	// Timeout bounds one request to the cluster; default 10s.
	Timeout time.Duration
	// AnswerWithin bounds what a person waits for: `team status` and `search --team` answer
	// within it, "cluster unreachable (last contact …)" when no node did; default 2s.
	AnswerWithin time.Duration
	// Now is the wall clock (default time.Now; tests inject one). An op stamped more than
	// FarFuture (default 24h) ahead of it is refused: no clock is that wrong.
	Now       func() time.Time
	FarFuture time.Duration
}

func (c *Config) defaults() {
	if c.Every <= 0 {
		c.Every = 250 * time.Millisecond
	}
	if c.Batch <= 0 {
		c.Batch = 1000
	}
	if c.PullBatch <= 0 {
		c.PullBatch = 2000
	}
	if c.PullAhead == 0 {
		c.PullAhead = 2
	}
	if c.VerifyWorkers <= 0 {
		c.VerifyWorkers = runtime.GOMAXPROCS(0)
	}
	if c.AnswerWithin <= 0 {
		c.AnswerWithin = 2 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.FarFuture <= 0 {
		c.FarFuture = 24 * time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.LocalOnly == nil {
		c.LocalOnly = func(string) bool { return false }
	}
}

// Team is this device's membership of a team cluster: join, share, push, pull, search.
type Team struct {
	cfg    Config
	st     *state
	origin string

	mu      sync.Mutex // guards rq, lastErr, pulled
	rq      *rq
	lastErr string
	pulled  int // ops pulled since Start

	syncMu   sync.Mutex           // one push or pull at a time
	retried  map[string]time.Time // project → last retry of its held ops; guarded by syncMu
	admitted time.Time            // an admin's last look for devices to admit; guarded by syncMu

	kick      chan struct{}
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New opens the team state; it contacts no cluster until Start or Join.
func New(ctx context.Context, cfg Config) (*Team, error) {
	cfg.defaults()
	if cfg.Replica == nil || cfg.Key == nil || cfg.StatePath == "" || cfg.OpenState == nil {
		return nil, errors.New("team: Replica, Key, StatePath and OpenState are required")
	}
	st, err := openState(ctx, cfg.OpenState, cfg.StatePath)
	if err != nil {
		return nil, err
	}
	t := &Team{cfg: cfg, st: st, origin: cfg.Replica.Origin(), kick: make(chan struct{}, 1), retried: map[string]time.Time{}}
	if urls, _ := st.get(ctx, "urls"); urls != "" && cfg.Password != nil {
		if pw := cfg.Password(); pw != "" {
			user, _ := st.get(ctx, "user")
			t.rq = newRQ(splitList(urls), user, pw, cfg.Timeout)
			ca, _ := st.get(ctx, "ca")
			if err := t.rq.trust([]byte(ca)); err != nil {
				st.close()
				return nil, fmt.Errorf("team: the CA kept at join: %w", err)
			}
		}
	}
	return t, nil
}

// Start runs the push/pull loop until Close.
func (t *Team) Start(ctx context.Context) {
	ctx, t.cancel = context.WithCancel(ctx)
	var sub *feed.Subscription
	if t.cfg.Feed != nil {
		sub = t.cfg.Feed.Subscribe(64)
	}
	t.wg.Add(1)
	go t.loop(ctx, sub)
}

// Close stops the loop, waits for it, and closes the state. It is idempotent.
func (t *Team) Close() error {
	var err error
	t.closeOnce.Do(func() {
		if t.cancel != nil {
			t.cancel()
		}
		t.wg.Wait()
		err = t.st.close()
	})
	return err
}

func (t *Team) loop(ctx context.Context, sub *feed.Subscription) {
	defer t.wg.Done()
	var ready <-chan struct{}
	if sub != nil {
		defer sub.Close()
		ready = sub.Ready()
	}
	tick := time.NewTicker(t.cfg.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ready:
			if !ok {
				ready = nil
				continue
			}
			changes, overflowed := sub.Take()
			if overflowed || slices.ContainsFunc(changes, func(c feed.Change) bool { return c.LocalOps }) {
				t.note(t.Push(ctx))
			}
		case <-t.kick:
			t.note(t.Push(ctx))
		case <-tick.C:
			t.note(t.Push(ctx))
			_, err := t.Pull(ctx, nil)
			t.note(err)
		}
	}
}

func (t *Team) note(err error) {
	if err == nil || errors.Is(err, ErrNotJoined) || errors.Is(err, context.Canceled) {
		return
	}
	if errors.Is(err, ErrNotAdmitted) || errors.Is(err, ErrRemoved) {
		return // a standing, not an error: status says it (Admitted, Removed)
	}
	t.mu.Lock()
	t.lastErr = err.Error()
	t.mu.Unlock()
	t.cfg.Logger.Warn("team", "err", err)
}

func (t *Team) client() (*rq, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rq == nil {
		return nil, ErrNotJoined
	}
	return t.rq, nil
}

// JoinRequest is what `memnode team join` gives: the cluster's URLs, the cluster user and
// password, the team's name (when this join founds it), and the PEM certificate of the CA
// that signed the nodes' HTTPS certificates (nil: the system's roots).
type JoinRequest struct {
	URLs     []string
	User     string
	Password string
	Name     string
	CACert   []byte
}

// JoinInfo is what join prints.
type JoinInfo struct {
	Name    string `json:"name"`
	Leader  string `json:"leader"`
	Members int    `json:"members"`
	Founded bool   `json:"founded"` // this device created the team's schema and is its admin
}

// Join connects to the cluster (any of urls), creates or migrates the team schema, registers
// this device as a member and pins the team's admins. The password is kept in memory only:
// the caller stores it in the key store.
func (t *Team) Join(ctx context.Context, req JoinRequest) (JoinInfo, error) {
	urls, user, password, name := req.URLs, req.User, req.Password, req.Name
	if len(urls) == 0 || user == "" {
		return JoinInfo{}, errors.New("team join: a URL and --user are required")
	}
	c := newRQ(urls, user, password, t.cfg.Timeout)
	if err := c.trust(req.CACert); err != nil {
		return JoinInfo{}, fmt.Errorf("team join: %w", err)
	}
	if _, err := migrate(ctx, c, time.Now()); err != nil {
		return JoinInfo{}, fmt.Errorf("team join: %w", err)
	}
	if name == "" {
		name = "team"
	}
	author := user + "/" + t.cfg.Device
	now := time.Now().UnixMilli()
	msig, err := t.cfg.Key.Sign(memberBytes(t.origin, author))
	if err != nil {
		return JoinInfo{}, fmt.Errorf("team join: %w", err)
	}
	// A name is one device's: another device's signed row under it (a member, or one
	// removed) keeps it, and the admins' nodes would never admit this one.
	res, err := c.query(ctx, levelStrong, []stmt{st(`SELECT origin, sig FROM team_members WHERE author = ? AND origin != ?`, author, t.origin)})
	if err != nil {
		return JoinInfo{}, fmt.Errorf("team join: %w", err)
	}
	for _, row := range res[0].Values {
		if verifyMember(strOf(row[0]), author, strOf(row[1])) == nil {
			return JoinInfo{}, fmt.Errorf("team join: %w: %q (set another device name: device_name in settings)", ErrNameTaken, author)
		}
	}
	// The first member to get here founds the team: INSERT OR IGNORE keeps the first name
	// and admin list however many members join at once.
	if _, err := c.execute(ctx, []stmt{
		st(`INSERT OR IGNORE INTO team_meta(key, value) VALUES ('name', ?)`, name),
		st(`INSERT OR IGNORE INTO team_meta(key, value) VALUES ('admins', ?)`, t.origin),
		st(`INSERT INTO team_members(origin, author, joined_at, sig) VALUES (?, ?, ?, ?)
			ON CONFLICT(origin) DO UPDATE SET author = excluded.author, sig = excluded.sig`, t.origin, author, now, b64(msig)),
	}); err != nil {
		return JoinInfo{}, fmt.Errorf("team join: %w", err)
	}
	res, err = c.query(ctx, levelStrong, []stmt{
		st(`SELECT key, value FROM team_meta WHERE key IN ('name', 'admins')`),
		st(`SELECT COUNT(*) FROM team_members`),
	})
	if err != nil {
		return JoinInfo{}, fmt.Errorf("team join: %w", err)
	}
	meta := map[string]string{}
	for _, row := range res[0].Values {
		meta[strOf(row[0])] = strOf(row[1])
	}
	members, err := res[1].scalar()
	if err != nil {
		return JoinInfo{}, fmt.Errorf("team join: %w", err)
	}
	if err := t.st.set(ctx, map[string]string{"urls": strings.Join(urls, ","), "user": user, "name": meta["name"],
		"admins": meta["admins"], "author": author, "ca": string(req.CACert)}); err != nil {
		return JoinInfo{}, fmt.Errorf("team join: save: %w", err)
	}
	t.mu.Lock()
	t.rq, t.lastErr = c, ""
	t.mu.Unlock()
	founded := slices.Contains(splitList(meta["admins"]), t.origin)
	if founded {
		// A founder admits itself: its member-add, signed by an admin in force (itself),
		// comes before any op of its own.
		if err := t.admitSelf(ctx, c, author); err != nil {
			return JoinInfo{}, fmt.Errorf("team join: %w", err)
		}
	}
	leader, _ := t.leader(ctx, c)
	return JoinInfo{Name: meta["name"], Leader: leader, Members: int(members), Founded: founded}, nil
}

// admitSelf writes this founder's own member-add unless the team has it.
func (t *Team) admitSelf(ctx context.Context, c *rq, author string) error {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	if err := t.membership(ctx, c); !errors.Is(err, ErrNotAdmitted) {
		return err
	}
	return t.writeTeamOps(ctx, c, kindMemberAdd, []adminPayload{{V: 1, Device: t.origin, Name: author}})
}

// Leave stops pushing and pulling. With purge, the records pulled from the team are
// forgotten here too (the cluster keeps them: they are their authors').
func (t *Team) Leave(ctx context.Context, purge bool) (forgotten int, err error) {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	if purge {
		ids, err := t.st.list(ctx, `SELECT id FROM records WHERE origin != ?`, t.origin)
		if err != nil {
			return 0, fmt.Errorf("team leave: %w", err)
		}
		if f, ok := t.cfg.Replica.(interface {
			Forget(context.Context, []string) (int, error)
		}); ok && len(ids) > 0 {
			if forgotten, err = f.Forget(ctx, ids); err != nil {
				return 0, fmt.Errorf("team leave: purge: %w", err)
			}
		}
	}
	for _, q := range []string{`DELETE FROM config`, `DELETE FROM shared`, `DELETE FROM outbox`, `DELETE FROM cursors`, `DELETE FROM records`, `DELETE FROM rejected`, `DELETE FROM held`, `DELETE FROM admin_log`, `DELETE FROM squatted`} {
		if _, err := t.st.db.ExecContext(ctx, q); err != nil {
			return forgotten, fmt.Errorf("team leave: %w", err)
		}
	}
	t.mu.Lock()
	t.rq, t.lastErr = nil, ""
	t.mu.Unlock()
	return forgotten, nil
}

// Share makes project leave the device for the team: its records, those written before
// too, are pushed, and the other members' records of it are pulled.
func (t *Team) Share(ctx context.Context, project string) error {
	if project == "" {
		return errors.New("team share: a project is required")
	}
	if t.cfg.LocalOnly(project) {
		return fmt.Errorf("team share %s: %w", project, ErrLocalOnly)
	}
	c, err := t.client()
	if err != nil {
		return err
	}
	// This device's stream in the project continues after what the cluster already holds of
	// it (a device that left and joins again must not reuse a number).
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT COALESCE(MAX(tseq), 0) FROM team_ops WHERE origin = ? AND project = ?`, t.origin, project)})
	if err != nil {
		return fmt.Errorf("team share: %w", err)
	}
	base, err := res[0].scalar()
	if err != nil {
		return fmt.Errorf("team share: %w", err)
	}
	if _, err := t.st.db.ExecContext(ctx, `INSERT OR IGNORE INTO shared(project) VALUES (?)`, project); err != nil {
		return fmt.Errorf("team share: %w", err)
	}
	if err := t.st.set(ctx, map[string]string{"base:" + project: strconv.FormatInt(base, 10)}); err != nil {
		return fmt.Errorf("team share: %w", err)
	}
	// Rescan this device's op-log from the start: ops already in the outbox keep their
	// numbers, older ops of the newly shared project join it. A flag, not scanned = 0: a
	// scan running now (the one a join started, 30,000 ops of history) would write its own
	// position over a reset, and the project's history would never be queued.
	if err := t.st.set(ctx, map[string]string{"rescan": "1"}); err != nil {
		return fmt.Errorf("team share: %w", err)
	}
	t.wake()
	return nil
}

// Unshare stops pushing and pulling project. What was pushed stays on the cluster.
func (t *Team) Unshare(ctx context.Context, project string) error {
	if _, err := t.st.db.ExecContext(ctx, `DELETE FROM shared WHERE project = ?`, project); err != nil {
		return fmt.Errorf("team unshare: %w", err)
	}
	// Ops of it still waiting in the outbox never leave.
	if _, err := t.st.db.ExecContext(ctx, `DELETE FROM outbox WHERE project = ? AND pushed = 0`, project); err != nil {
		return fmt.Errorf("team unshare: %w", err)
	}
	return nil
}

func (t *Team) wake() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *Team) shared(ctx context.Context) ([]string, error) {
	return t.st.list(ctx, `SELECT project FROM shared ORDER BY project`)
}

// payloadProject reads the project a record payload names.
func payloadProject(p []byte) string {
	var peek struct {
		Project string `json:"project"`
	}
	_ = json.Unmarshal(p, &peek)
	return peek.Project
}

// ownPayload returns a record payload naming origin as its author device. A record this
// device imported keeps the device that wrote it first; pushed, the record is this
// device's word, signed by it, and members refuse a payload naming another author than its
// signer (checkPayload).
func ownPayload(p []byte, origin string) []byte {
	var head struct {
		Origin string `json:"origin"`
	}
	if json.Unmarshal(p, &head) != nil || head.Origin == origin {
		return p
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil {
		return p
	}
	m["origin"], _ = json.Marshal(origin)
	b, err := json.Marshal(m)
	if err != nil {
		return p
	}
	return b
}

// Push moves this device's new ops of shared projects into the outbox (signed, numbered),
// then sends the outbox to the cluster in atomic batches. The outbox fills while the
// cluster is down; the cluster's UNIQUE(origin, project, tseq) makes a resend a no-op.
func (t *Team) Push(ctx context.Context) error {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	c, err := t.client()
	if err != nil {
		return err
	}
	if err := t.scan(ctx); err != nil {
		return fmt.Errorf("team push: %w", err)
	}
	// Before an admin admitted this device, its ops would sit at positions every member
	// refuses: they wait in the outbox.
	if err := t.membership(ctx, c); err != nil {
		return fmt.Errorf("team push: %w", err)
	}
	author, _ := t.st.get(ctx, "author")
	for {
		ops, seqs, err := t.pendingOutbox(ctx, author)
		if err != nil {
			return fmt.Errorf("team push: %w", err)
		}
		if len(ops) == 0 {
			return nil
		}
		if _, err := c.execute(ctx, pushStatements(ops)); err != nil {
			return fmt.Errorf("team push: %w", err)
		}
		if err := t.markPushed(ctx, seqs); err != nil {
			return fmt.Errorf("team push: %w", err)
		}
	}
}

// scan reads this device's op-log past the last scanned seq and queues the ops of shared
// projects. A forget also empties the outbox's copy of the forgotten content.
func (t *Team) scan(ctx context.Context) error {
	author, _ := t.st.get(ctx, "author")
	admin := slices.Contains(t.currentAdmins(ctx), t.origin)
	var shared []string
	after, restart := uint64(0), true
	for {
		// A share since the last batch (or before this scan) starts it again from seq 0,
		// with the projects shared now.
		rescan, err := t.st.get(ctx, "rescan")
		if err != nil {
			return err
		}
		if rescan != "" || restart {
			if after, err = t.startScan(ctx); err != nil {
				return err
			}
			if shared, err = t.shared(ctx); err != nil {
				return err
			}
			restart = false
		}
		ops, err := t.cfg.Replica.OpsSince(ctx, t.origin, after, t.cfg.Batch)
		if err != nil {
			return err
		}
		if len(ops) == 0 {
			return t.scanPaired(ctx, shared, author, admin)
		}
		if err := t.queue(ctx, ops, shared, author, admin); err != nil {
			return err
		}
		after = ops[len(ops)-1].Seq
	}
}

// scanPaired queues, for the team, the forgets this person's other devices (paired by
// device sync: their ops reach this replica under their own origin) made of team records
// this device may forget for the team — its own, or any as an admin. The other device may
// not be in the team, or may not be the record's author there: without this the record
// stayed on the cluster and on every member. Each device's op-log is read once, past a
// cursor of its own (config "paired:<origin>"); ops pulled from the team (origins
// "team:…") are not a device's.
func (t *Team) scanPaired(ctx context.Context, shared []string, author string, admin bool) error {
	vv, err := t.cfg.Replica.VersionVector(ctx)
	if err != nil {
		return err
	}
	for origin, top := range vv {
		if origin == t.origin || strings.HasPrefix(origin, "team:") {
			continue
		}
		v, err := t.st.get(ctx, "paired:"+origin)
		if err != nil {
			return err
		}
		after, _ := strconv.ParseUint(v, 10, 64)
		for after < top {
			ops, err := t.cfg.Replica.OpsSince(ctx, origin, after, t.cfg.Batch)
			if err != nil {
				return err
			}
			if len(ops) == 0 {
				break
			}
			if err := t.queuePaired(ctx, origin, ops, shared, author, admin); err != nil {
				return err
			}
			after = ops[len(ops)-1].Seq
		}
	}
	return nil
}

// queuePaired queues the team tombstones of one batch of a paired device's ops and moves
// that device's cursor, in one transaction. A tombstone signed here takes the next number
// of its project's stream; its outbox seq is negative (the op is not this device's), and
// pushes go in stream order.
func (t *Team) queuePaired(ctx context.Context, origin string, ops []store.Op, shared []string, author string, admin bool) error {
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, op := range ops {
		if op.Kind != store.OpForget {
			continue
		}
		var owner, project string
		err := tx.QueryRowContext(ctx, `SELECT origin, project FROM records WHERE id = ?`, op.RecordID).Scan(&owner, &project)
		if errors.Is(err, sql.ErrNoRows) {
			continue // not a team record
		}
		if err != nil {
			return err
		}
		if owner != t.origin && !admin || !slices.Contains(shared, project) {
			continue // another's record: the team would refuse this device's tombstone
		}
		var queued int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE record_id = ? AND kind = ?`, op.RecordID, store.OpForget).Scan(&queued); err != nil {
			return err
		}
		if queued > 0 {
			continue // forgotten here too, or on another paired device first
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET payload = NULL WHERE record_id = ? AND kind != ?`, op.RecordID, store.OpForget); err != nil {
			return err
		}
		var seq int64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(COALESCE(MIN(seq), 0), 0) - 1 FROM outbox`).Scan(&seq); err != nil {
			return err
		}
		if err := t.enqueue(ctx, tx, seq, project, op, author); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO config(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
		"paired:"+origin, strconv.FormatUint(ops[len(ops)-1].Seq, 10)); err != nil {
		return err
	}
	return tx.Commit()
}

// enqueue numbers op in its project's stream, signs it as this device's and stores it in
// the outbox under seq.
func (t *Team) enqueue(ctx context.Context, tx *sql.Tx, seq int64, project string, op store.Op, author string) error {
	var tseq uint64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(COALESCE((SELECT MAX(tseq) FROM outbox WHERE project = ?1), 0),
		COALESCE((SELECT CAST(value AS INTEGER) FROM config WHERE key = 'base:' || ?1), 0)) + 1`, project).Scan(&tseq); err != nil {
		return err
	}
	top := Op{Origin: t.origin, TSeq: tseq, Project: project, Kind: op.Kind, RecordID: op.RecordID, HLC: op.HLC, Payload: op.Payload, Author: author}
	if err := sign(t.cfg.Key, &top); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO outbox(seq, project, tseq, kind, record_id, hlc, payload, payload_hash, sig) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		seq, project, tseq, op.Kind, op.RecordID, int64(op.HLC), op.Payload, top.PayloadHash, top.Sig)
	return err
}

// startScan returns the seq a scan starts after: 0 when a share asked for a rescan (the
// flag is taken), else the last seq scanned.
func (t *Team) startScan(ctx context.Context) (uint64, error) {
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM config WHERE key = 'rescan'`)
	if err != nil {
		return 0, err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO config(key, value) VALUES ('scanned', '0') ON CONFLICT(key) DO UPDATE SET value = excluded.value`); err != nil {
			return 0, err
		}
		return 0, tx.Commit()
	}
	var v string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM config WHERE key = 'scanned'`).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	after, _ := strconv.ParseUint(v, 10, 64)
	return after, tx.Commit()
}

func (t *Team) queue(ctx context.Context, ops []store.Op, shared []string, author string, admin bool) error {
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, op := range ops {
		var project string
		switch op.Kind {
		case store.OpSession, store.OpPrompt, store.OpObservation, store.OpSummary, store.OpSupersede:
			if op.Payload == nil {
				continue // forgotten before it was pushed: nothing to share
			}
			project = payloadProject(op.Payload)
			if op.Kind != store.OpSupersede {
				op.Payload = ownPayload(op.Payload, t.origin)
				break
			}
			var origin string
			err := tx.QueryRowContext(ctx, `SELECT origin FROM records WHERE id = ?`, op.RecordID).Scan(&origin)
			if errors.Is(err, sql.ErrNoRows) || err == nil && origin != t.origin && !admin {
				continue // not a team record, or another's: corrected here only, the team would refuse it
			}
			if err != nil {
				return err
			}
		case store.OpForget:
			if _, err := tx.ExecContext(ctx, `UPDATE outbox SET payload = NULL WHERE record_id = ? AND kind != ?`, op.RecordID, store.OpForget); err != nil {
				return err
			}
			var origin string
			err := tx.QueryRowContext(ctx, `SELECT origin, project FROM records WHERE id = ?`, op.RecordID).Scan(&origin, &project)
			if errors.Is(err, sql.ErrNoRows) {
				continue // not a team record
			}
			if err != nil {
				return err
			}
			if origin != t.origin && !admin {
				continue // others' records: forgotten here only, the team would refuse it
			}
		default:
			continue
		}
		if !slices.Contains(shared, project) || t.cfg.LocalOnly(project) {
			continue
		}
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE seq = ?`, op.Seq).Scan(&exists); err != nil {
			return err
		}
		if exists > 0 {
			continue // queued before a rescan: keeps its number
		}
		if err := t.enqueue(ctx, tx, int64(op.Seq), project, op, author); err != nil {
			return err
		}
		if op.Kind != store.OpForget {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO records(id, origin, project) VALUES (?, ?, ?)`, op.RecordID, t.origin, project); err != nil {
				return err
			}
		}
	}
	// Not over a share's pending rescan (the next batch starts it).
	if _, err := tx.ExecContext(ctx, `INSERT INTO config(key, value) VALUES ('scanned', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value
		WHERE NOT EXISTS (SELECT 1 FROM config WHERE key = 'rescan')`,
		strconv.FormatUint(ops[len(ops)-1].Seq, 10)); err != nil {
		return err
	}
	return tx.Commit()
}

func (t *Team) pendingOutbox(ctx context.Context, author string) ([]Op, []int64, error) {
	// In stream order: a paired device's tombstone (a negative seq) takes its place after
	// the ops numbered before it.
	rows, err := t.st.db.QueryContext(ctx, `SELECT seq, project, tseq, kind, record_id, hlc, payload, payload_hash, sig FROM outbox
		WHERE pushed = 0 ORDER BY project, tseq LIMIT ?`, t.cfg.Batch)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ops []Op
	var seqs []int64
	for rows.Next() {
		var seq, tseq, hlc int64
		op := Op{Origin: t.origin, Author: author}
		if err := rows.Scan(&seq, &op.Project, &tseq, &op.Kind, &op.RecordID, &hlc, &op.Payload, &op.PayloadHash, &op.Sig); err != nil {
			return nil, nil, err
		}
		op.TSeq, op.HLC = uint64(tseq), uint64(hlc)
		ops = append(ops, op)
		seqs = append(seqs, seq)
	}
	return ops, seqs, rows.Err()
}

func (t *Team) markPushed(ctx context.Context, seqs []int64) error {
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range seqs {
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET pushed = 1 WHERE seq = ?`, s); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// pushStatements is one atomic batch: each op, its searchable text, and for a tombstone the
// purge of the record's content everywhere on the cluster.
func pushStatements(ops []Op) []stmt {
	out := make([]stmt, 0, 2*len(ops))
	for _, op := range ops {
		var payload any
		if op.Payload != nil {
			payload = string(op.Payload)
		}
		out = append(out, st(`INSERT OR IGNORE INTO team_ops(origin, tseq, project, kind, record_id, hlc, payload, payload_hash, author, sig)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, op.Origin, op.TSeq, op.Project, op.Kind, op.RecordID,
			strconv.FormatUint(op.HLC, 10), payload, op.PayloadHash, op.Author, op.Sig))
		switch {
		case op.Kind == store.OpForget:
			out = append(out,
				st(`UPDATE team_ops SET payload = NULL WHERE record_id = ? AND kind != 'forget'`, op.RecordID),
				st(`DELETE FROM team_records WHERE id = ?`, op.RecordID))
		case op.Payload != nil:
			if doc, ok := searchText(op.Kind, op.Payload); ok {
				out = append(out, st(`INSERT OR IGNORE INTO team_records(id, project, kind, type, author, origin, title, body, created_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, op.RecordID, op.Project, op.Kind, doc.Type, op.Author, op.Origin, doc.Title, doc.Body, doc.CreatedAt))
			}
		}
	}
	return out
}
