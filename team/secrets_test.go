package team

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/secretsample"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// TestTeamRogueSecretsAreRedactedOnPull: mallory, a member with valid cluster credentials
// and her own signing key, writes ops straight into team_ops the way a script would, each
// observation carrying one secret of every kind memnode redacts (internal/secretsample) in
// its title, narrative and facts, one of them stamped ahead of alice's clock so that alice
// holds it in team.db before applying it. Alice applies every one with the secret replaced
// by its [REDACTED:kind] marker, no file of hers (replica, its WAL, team.db) holds any of
// the secrets, and her team search, which reads the cluster's rows, shows none of them.
func TestTeamRogueSecretsAreRedactedOnPull(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P = "billing"
	a, m := newMember(t, "alice", "laptop"), newMember(t, "mallory", "evil")
	for _, x := range []*member{a, m} {
		x.join(t, c, P)
	}
	a.t.Start(ctx)
	malRec := m.record(t, P, "MALLORY own record")
	if err := m.t.Push(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "mallory's record on alice", 30*time.Second, func() bool { return a.has(t, "MALLORY own record") })
	tmpl := m.payloadOf(t, malRec)
	evil := rogue{m}
	samples := secretsample.All("rg")
	var rows []stmt
	for i, s := range samples {
		id := fmt.Sprintf("rogue-secret-%03d", i)
		op := Op{Project: P, Kind: store.OpObservation, RecordID: id,
			Payload: edited(t, tmpl, "id", id, "title", s.Line, "narrative", fmt.Sprintf("rogue %03d:\n%s", i, s.Line), "facts", []string{s.Line})}
		if i == 0 {
			op.HLC = uint64(time.Now().Add(3*time.Second).UnixMilli()) << 16 // held until alice's clock gets there
		}
		rows = append(rows, pushStatements([]Op{evil.write(t, op)})[1:]...)
	}
	// The search index's rows too, as a pusher writes them: team search shows the hits.
	mc, err := m.t.client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mc.execute(ctx, rows); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForState(t, "alice applies every rogue op", 60*time.Second, func() (bool, string) {
		var n int
		err := a.r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observations WHERE id LIKE 'rogue-secret-%'`).Scan(&n)
		return err == nil && n == len(samples), fmt.Sprintf("%d of %d (%v); status %+v", n, len(samples), err, a.status(t))
	})
	if st := a.status(t); st.Rejected != 0 {
		t.Fatalf("alice refused ops instead of redacting them: %+v", st.Refused)
	}
	for i, s := range samples {
		var title, narrative, facts string
		if err := a.r.ReadDB().QueryRow(`SELECT title, narrative, facts FROM observations WHERE id = ?`, fmt.Sprintf("rogue-secret-%03d", i)).Scan(&title, &narrative, &facts); err != nil {
			t.Fatal(err)
		}
		marker := "[REDACTED:" + s.Kind + "]"
		for field, v := range map[string]string{"title": title, "narrative": narrative, "facts": facts} {
			if strings.Contains(v, s.Secret) || !strings.Contains(v, marker) {
				t.Errorf("%s: %s on alice is %q", s.Kind, field, v)
			}
		}
	}
	hits, err := a.t.Search(ctx, "rogue", P, 200)
	if err != nil || len(hits) < len(samples)/2 {
		t.Fatalf("team search for the rogue records: %d hits, %v", len(hits), err)
	}
	for _, h := range hits {
		for _, s := range samples {
			if strings.Contains(h.Title, s.Secret) || strings.Contains(h.Snippet, s.Secret) {
				t.Errorf("team search shows %s's secret: %q / %q", s.Kind, h.Title, h.Snippet)
			}
		}
	}
	var db string
	if err := a.r.ReadDB().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Dir(db), filepath.Dir(a.t.cfg.StatePath)} {
		for _, s := range samples {
			if files := testkit.FilesContaining(t, dir, s.Secret); len(files) > 0 {
				t.Errorf("%s: the secret %q is in alice's %v", s.Kind, s.Secret, files)
				for _, f := range files {
					b, _ := os.ReadFile(filepath.Join(dir, f))
					k := bytes.Index(b, []byte(s.Secret))
					t.Logf("context: %q", b[max(0, k-200):min(len(b), k+100)])
				}
			}
		}
	}
}
