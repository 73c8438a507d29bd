package e2ekit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/rqlitetest"
)

const E2eTeamPassword = "Tp-9c1f-e2e-secret"

// TeamMember is one memnode data dir whose node is a member of the team.
type TeamMember struct {
	*Instance
	proj string
	seq  int
}

func NewTeamMember(t *testing.T, proj string) *TeamMember {
	in := NewInstance(t)
	// The key store: the encrypted file (no OS keyring on a CI machine).
	in.Extra = append(in.Extra, "MEMNODE_KEYS_BACKEND=file", "MEMNODE_KEYS_PASSPHRASE=e2e-keys-passphrase")
	return &TeamMember{Instance: in, proj: proj}
}

// Write fires a real Claude Code tool use in the member's project whose observation
// carries word.
func (m *TeamMember) Write(t *testing.T, word string) {
	t.Helper()
	m.seq++
	sid := fmt.Sprintf("team-%d-%d", m.Port, m.seq)
	obs := fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_%d","tool_input":{"command":"grep -rn %s internal/","description":"find %s"},"tool_response":{"stdout":"internal/team/%s.go:12: func %s() {}\n","stderr":""}}`,
		sid, JsonString(m.proj), m.seq, word, word, word, word)
	if r := m.Run([]byte(obs), "hook", "claude-code", "observation"); r.Code != 0 {
		t.Fatalf("hook: exit %d stderr %q", r.Code, r.Stderr)
	}
}

// TeamUsers are the cluster's users of the team tests: alice and bob, the team password.
func TeamUsers() []rqlitetest.User {
	return []rqlitetest.User{
		{Username: "alice", Password: E2eTeamPassword, Perms: []string{"execute", "query", "status"}},
		{Username: "bob", Password: E2eTeamPassword, Perms: []string{"execute", "query", "status"}},
	}
}

// TeamOfTwo starts a real one-node rqlite cluster and the nodes of alice and bob, which join
// it as team acme and share project (a directory of its own, proj). prepare, when not nil,
// runs on each member before its node starts.
func TeamOfTwo(t *testing.T, project string, prepare func(m *TeamMember, user string)) (c *rqlitetest.Cluster, proj string, a, b *TeamMember) {
	t.Helper()
	c = rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: TeamUsers()})
	proj = filepath.Join(t.TempDir(), project)
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	a, b = NewTeamMember(t, proj), NewTeamMember(t, proj)
	for _, m := range []struct {
		*TeamMember
		user string
	}{{a, "alice"}, {b, "bob"}} {
		if prepare != nil {
			prepare(m.TeamMember, m.user)
		}
		m.Start()
		m.MustRun([]byte(E2eTeamPassword+"\n"), "team", "join", strings.Join(c.URLs(), ","), "--user", m.user, "--name", "acme")
		m.MustRun(nil, "team", "share", project)
	}
	return c, proj, a, b
}

func (m *TeamMember) Finds(t *testing.T, word string) bool {
	t.Helper()
	var res apitype.Results
	out := m.MustRun(nil, "search", word, "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	return len(res.Hits) > 0
}
