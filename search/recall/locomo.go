package recall

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memnode/memnode/importer"
)

// Doc is one searchable document of a data set: a LoCoMo dialog turn or a coding record.
type Doc struct {
	ID      string // unique within its project ("D1:3")
	Project string
	Text    string
	Time    int64 // Unix ms; orders the documents of a project
}

// Question asks for the documents named by Evidence within Project.
type Question struct {
	Project  string
	Text     string
	Category int
	Evidence []string
}

// Set is a retrieval data set.
type Set struct {
	Name      string
	Docs      []Doc
	Questions []Question
	// Records, when set, are what memnode stores (through importer.Batch, the import
	// path), one observation per Doc with the Doc's ID; else every Doc becomes one
	// observation (DocObservation).
	Records []importer.Record
}

// CategoryName names a LoCoMo question category; only 1–4 have evidence turns (5,
// adversarial, asks about what was never said), and "" marks any other.
func CategoryName(c int) string {
	switch c {
	case 1:
		return "multi-hop"
	case 2:
		return "temporal"
	case 3:
		return "open-domain"
	case 4:
		return "single-hop"
	}
	return ""
}

// Bounds on what one archive may hold, so a corrupt or hostile file cannot exhaust memory.
const (
	maxMemberBytes = 16 << 20
	maxMembers     = 64
)

// LoadLoCoMo reads locomo10.zip (snap-research/locomo, data/locomo10.zip): every JSON
// member is one conversation and becomes one project named after the file ("locomo-26").
func LoadLoCoMo(file string) (*Set, error) {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, fmt.Errorf("open locomo: %w", err)
	}
	defer zr.Close()
	set := &Set{Name: "locomo"}
	n := 0
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || path.Ext(f.Name) != ".json" {
			continue
		}
		if n++; n > maxMembers {
			return nil, fmt.Errorf("read locomo: more than %d conversations", maxMembers)
		}
		data, err := readMember(f)
		if err != nil {
			return nil, fmt.Errorf("read locomo %s: %w", f.Name, err)
		}
		docs, qs, err := ParseConversation("locomo-"+strings.TrimSuffix(path.Base(f.Name), ".json"), data)
		if err != nil {
			return nil, fmt.Errorf("read locomo %s: %w", f.Name, err)
		}
		set.Docs = append(set.Docs, docs...)
		set.Questions = append(set.Questions, qs...)
	}
	if len(set.Docs) == 0 {
		return nil, errors.New("read locomo: no conversations in the archive")
	}
	return set, nil
}

func readMember(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxMemberBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxMemberBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxMemberBytes>>20)
	}
	return data, nil
}

type locomoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

type locomoQA struct {
	Question string          `json:"question"`
	Category int             `json:"category"`
	Evidence json.RawMessage `json:"evidence"`
}

var (
	sessionKey = regexp.MustCompile(`^session_(\d+)$`)
	turnID     = regexp.MustCompile(`D\d+:\d+`)
)

// ParseConversation reads one LoCoMo conversation (the top-level object of a
// locomo10_v2 member, or the "conversation" object of locomo10.json's entries beside
// its "qa"): its turns in session order as documents of project, and its questions of
// categories 1–4 whose evidence names at least one of its turns. Turn text is
// "Speaker: text", plus " [shares a photo: caption]" for a turn with a photo caption.
func ParseConversation(project string, data []byte) ([]Doc, []Question, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, fmt.Errorf("parse conversation: %w", err)
	}
	conv := top
	if c, ok := top["conversation"]; ok {
		if err := json.Unmarshal(c, &conv); err != nil {
			return nil, nil, fmt.Errorf("parse conversation: %w", err)
		}
	}
	type session struct {
		n     int
		turns []locomoTurn
		at    int64
	}
	var sessions []session
	for k, v := range conv {
		m := sessionKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 1000 {
			return nil, nil, fmt.Errorf("parse conversation: bad session key %q", k)
		}
		s := session{n: n}
		if err := json.Unmarshal(v, &s.turns); err != nil {
			return nil, nil, fmt.Errorf("parse conversation %s: %w", k, err)
		}
		var when string
		if raw, ok := conv[k+"_date_time"]; ok && json.Unmarshal(raw, &when) == nil {
			if t, err := time.Parse("3:04 pm on 2 January, 2006", when); err == nil {
				s.at = t.UnixMilli()
			}
		}
		sessions = append(sessions, s)
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].n < sessions[j].n })
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var docs []Doc
	known := map[string]bool{}
	var last int64
	for _, s := range sessions {
		at := s.at
		if at == 0 {
			at = base + int64(s.n)*86_400_000
		}
		for _, t := range s.turns {
			if t.DiaID == "" || known[t.DiaID] {
				continue
			}
			known[t.DiaID] = true
			text := t.Speaker + ": " + t.Text
			if t.Speaker == "" {
				text = t.Text
			}
			if t.Caption != "" {
				text += " [shares a photo: " + t.Caption + "]"
			}
			// Turns of a session are a minute apart; time only orders them.
			at = max(at, last+60_000)
			last = at
			docs = append(docs, Doc{ID: t.DiaID, Project: project, Text: text, Time: at})
		}
	}
	var qas []locomoQA
	if raw, ok := top["qa"]; ok {
		if err := json.Unmarshal(raw, &qas); err != nil {
			return nil, nil, fmt.Errorf("parse conversation qa: %w", err)
		}
	}
	var qs []Question
	for _, qa := range qas {
		if CategoryName(qa.Category) == "" || strings.TrimSpace(qa.Question) == "" {
			continue
		}
		var ev []string
		for _, id := range evidenceIDs(qa.Evidence) {
			if known[id] && !slices.Contains(ev, id) {
				ev = append(ev, id)
			}
		}
		if len(ev) == 0 {
			continue
		}
		qs = append(qs, Question{Project: project, Text: qa.Question, Category: qa.Category, Evidence: ev})
	}
	return docs, qs, nil
}

// evidenceIDs reads an evidence list; an entry may hold several IDs ("D8:6; D9:17").
func evidenceIDs(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		list = []string{one}
	}
	var out []string
	for _, e := range list {
		out = append(out, turnID.FindAllString(e, -1)...)
	}
	return out
}
