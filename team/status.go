package team

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
)

// Node is one rqlite node as the cluster reports it.
type Node struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Leader    bool   `json:"leader"`
	Reachable bool   `json:"reachable"`
}

// Status is what `memnode team status` shows.
type Status struct {
	Joined    bool     `json:"joined"`
	Name      string   `json:"name,omitempty"`
	User      string   `json:"user,omitempty"`
	Author    string   `json:"author,omitempty"`
	URLs      []string `json:"urls,omitempty"`
	Admin     bool     `json:"admin"`
	Admins    []string `json:"admins,omitempty"` // the team's admins (user/device, or device ID when unknown here)
	Reachable bool     `json:"reachable"`
	Leader    string   `json:"leader,omitempty"`
	Nodes     []Node   `json:"nodes,omitempty"`
	Members   int      `json:"members"` // devices admitted and not removed
	// Admitted: an admin admitted this device (its ops go out); Removed: an admin removed
	// it (nothing goes out or comes in any more).
	Admitted bool `json:"admitted"`
	Removed  bool `json:"removed,omitempty"`
	// Waiting are devices that joined and no admin admitted (a name another device holds,
	// or no admin's node running since).
	Waiting     []string `json:"waiting,omitempty"`
	Shared      []string `json:"shared"`
	PushBacklog int      `json:"push_backlog"` // own ops not yet on the cluster (queued, or not yet looked at)
	PullLag     int      `json:"pull_lag"`     // ops on the cluster past this device's cursors (-1: unknown)
	Rejected    int      `json:"rejected"`     // ops refused on verification (forged, wrong author, tombstone without right)
	// Stalled are the authors' streams waiting for this device's clock (hold.go).
	Stalled []Stall `json:"stalled,omitempty"`
	// Refused are the latest refused ops (up to 20, newest first), each with its author.
	Refused   []Refusal `json:"refused,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	// Squatted are rows someone else wrote under this device's ID and sequence numbers:
	// errors for the pusher, each with its cause.
	Squatted []Squat `json:"squatted,omitempty"`
}

// Refusal is one op this member refused: where, whose (the signing device's name as this
// member knows it, else its ID), and why.
type Refusal struct {
	Pos    int64  `json:"pos"`
	Author string `json:"author"`
	Kind   string `json:"kind"`
	Record string `json:"record,omitempty"`
	Reason string `json:"reason"`
}

// Squat is one row on the cluster under this device's (project, tseq) that this device did
// not sign.
type Squat struct {
	Project string `json:"project"`
	TSeq    uint64 `json:"tseq"`
	Pos     int64  `json:"pos"`
	Error   string `json:"error"`
}

// LocalStatus is Status without asking the cluster: Reachable is whether the last exchange
// with it succeeded; leader, nodes, members and pull lag are left out.
func (t *Team) LocalStatus(ctx context.Context) (Status, error) {
	s, _, err := t.localStatus(ctx)
	return s, err
}

// Status reports the membership; with the cluster down it still answers, Reachable false.
func (t *Team) Status(ctx context.Context) (Status, error) {
	s, c, err := t.localStatus(ctx)
	if err != nil || !s.Joined {
		return s, err
	}
	s.Reachable = false
	s.PullLag = -1
	if c == nil {
		s.LastError = "no password: run `memnode team join` again"
		return s, nil
	}
	// A person waits for this: bounded, whatever the cluster does (a node that accepts and
	// never answers would hold each URL for the request timeout).
	ctx, cancel := context.WithTimeout(ctx, t.cfg.AnswerWithin)
	defer cancel()
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT origin, author, sig FROM team_members ORDER BY joined_at, origin`)})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrUnreachable) {
			err = c.unreachable(err)
		}
		s.LastError = err.Error()
		return s, nil
	}
	s.Reachable = true
	log := t.roster(ctx)
	for _, row := range res[0].Values {
		origin, name := strOf(row[0]), strOf(row[1])
		if !log.everAdmitted(origin, math.MaxInt64) && verifyMember(origin, name, strOf(row[2])) == nil {
			s.Waiting = append(s.Waiting, name)
		}
	}
	lag := 0
	for _, p := range s.Shared {
		var cursor int64
		_ = t.st.db.QueryRowContext(ctx, `SELECT pos FROM cursors WHERE project = ?`, p).Scan(&cursor)
		n, err := t.lagOf(ctx, c, p, cursor)
		if err != nil {
			lag = -1
			break
		}
		lag += n
	}
	s.PullLag = lag
	s.Leader, s.Nodes = t.leader(ctx, c)
	return s, nil
}

func (t *Team) localStatus(ctx context.Context) (Status, *rq, error) {
	var s Status
	urls, err := t.st.get(ctx, "urls")
	if err != nil {
		return s, nil, err
	}
	s.Shared, err = t.shared(ctx)
	if err != nil {
		return s, nil, err
	}
	if s.Shared == nil {
		s.Shared = []string{}
	}
	if s.PushBacklog, err = t.backlog(ctx); err != nil {
		return s, nil, err
	}
	if s.Rejected, err = t.st.count(ctx, `SELECT COUNT(*) FROM rejected`); err != nil {
		return s, nil, err
	}
	if s.Stalled, err = t.stalls(ctx); err != nil {
		return s, nil, err
	}
	if s.Refused, err = t.refusals(ctx); err != nil {
		return s, nil, err
	}
	if s.Squatted, err = t.squats(ctx); err != nil {
		return s, nil, err
	}
	t.mu.Lock()
	s.LastError = t.lastErr
	c := t.rq
	t.mu.Unlock()
	if c != nil {
		s.Reachable = c.answered()
	}
	if urls == "" {
		return s, c, nil
	}
	s.Joined, s.URLs = true, splitList(urls)
	s.Name, _ = t.st.get(ctx, "name")
	s.User, _ = t.st.get(ctx, "user")
	s.Author, _ = t.st.get(ctx, "author")
	log := t.roster(ctx)
	admins := log.now()
	s.Admin = slices.Contains(admins, t.origin)
	_, refusal := log.member(t.origin, math.MaxInt64)
	s.Admitted = refusal == ""
	s.Removed = !s.Admitted && log.everAdmitted(t.origin, math.MaxInt64)
	for _, e := range log.entries {
		switch e.kind {
		case kindMemberAdd:
			s.Members++
		case kindMemberRemove:
			s.Members--
		}
	}
	s.Admins = t.adminNames(ctx, admins)
	return s, c, nil
}

func (t *Team) refusals(ctx context.Context) ([]Refusal, error) {
	rows, err := t.st.db.QueryContext(ctx, `SELECT pos, origin, kind, record_id, reason FROM rejected ORDER BY pos DESC LIMIT 20`)
	if err != nil {
		return nil, err
	}
	var out []Refusal
	var origins []string
	for rows.Next() {
		var r Refusal
		var origin string
		if err := rows.Scan(&r.Pos, &origin, &r.Kind, &r.Record, &r.Reason); err != nil {
			rows.Close()
			return nil, err
		}
		out, origins = append(out, r), append(origins, origin)
	}
	rows.Close() // one connection: nameOf below needs it
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Author = t.nameOf(ctx, origins[i])
	}
	return out, nil
}

func (t *Team) squats(ctx context.Context) ([]Squat, error) {
	rows, err := t.st.db.QueryContext(ctx, `SELECT project, tseq, pos, error FROM squatted ORDER BY pos`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Squat
	for rows.Next() {
		var s Squat
		if err := rows.Scan(&s.Project, &s.TSeq, &s.Pos, &s.Error); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// leader asks the cluster for its nodes (needs the status permission; "" without it).
func (t *Team) leader(ctx context.Context, c *rq) (string, []Node) {
	var nodes map[string]struct {
		APIAddr   string `json:"api_addr"`
		Leader    bool   `json:"leader"`
		Reachable bool   `json:"reachable"`
	}
	if err := c.get(ctx, "/nodes", &nodes); err != nil {
		return "", nil
	}
	var out []Node
	leader := ""
	for id, n := range nodes {
		out = append(out, Node{ID: id, URL: n.APIAddr, Leader: n.Leader, Reachable: n.Reachable})
		if n.Leader {
			leader = id
			c.preferLeader(n.APIAddr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return leader, out
}

// backlog counts the outbox rows not yet pushed plus this device's ops the pusher has not
// looked at yet (some of those may belong to unshared projects: an upper bound, exact once
// the pusher has run).
func (t *Team) backlog(ctx context.Context) (int, error) {
	n, err := t.st.count(ctx, `SELECT COUNT(*) FROM outbox WHERE pushed = 0`)
	if err != nil {
		return 0, err
	}
	joined, _ := t.st.get(ctx, "urls")
	if joined == "" {
		return n, nil
	}
	vv, err := t.cfg.Replica.VersionVector(ctx)
	if err != nil {
		return 0, err
	}
	v, _ := t.st.get(ctx, "scanned")
	scanned, _ := strconv.ParseUint(v, 10, 64)
	if r, _ := t.st.get(ctx, "rescan"); r != "" {
		scanned = 0 // a share's rescan is pending: all of this device's ops are still to look at
	}
	if own := vv[t.origin]; own > scanned {
		n += int(own - scanned)
	}
	return n, nil
}
