package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// codingFile is the coding-memory query set's file (testdata/coding.json).
type codingFile struct {
	Observations []memory.Observation `json:"observations"`
	Questions    []struct {
		Project string   `json:"project"`
		Text    string   `json:"text"`
		Expect  []string `json:"expect"` // titles of the observations that answer it
	} `json:"questions"`
}

// LoadCoding builds the coding-memory set: the observations of the claude-mem database
// at claudeMem (converted as `memnode import --from-claude-mem` does) plus those of the
// set file, and the file's questions with their expected observations named by title.
func LoadCoding(ctx context.Context, claudeMem, setFile string) (*Set, error) {
	data, err := os.ReadFile(setFile)
	if err != nil {
		return nil, fmt.Errorf("load coding set: %w", err)
	}
	var f codingFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("load coding set %s: %w", setFile, err)
	}
	cm, err := importer.OpenClaudeMem(ctx, claudeMem)
	if err != nil {
		return nil, fmt.Errorf("load coding set: %w", err)
	}
	defer cm.Close()
	set := &Set{Name: "coding"}
	if err := cm.Each(ctx, func(r importer.Record) error {
		if r.Kind == importer.KindObservation {
			set.Records = append(set.Records, r)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load coding set: %w", err)
	}
	for i := range f.Observations {
		o := f.Observations[i]
		o.SessionID = "coding:" + o.Project
		o.ID = store.ImportID(o.CreatedAt, "coding:"+o.Title)
		set.Records = append(set.Records, importer.Record{Kind: importer.KindObservation, Observation: &o})
	}
	byTitle := map[string]string{}
	for _, r := range set.Records {
		o := r.Observation
		byTitle[o.Title] = o.ID
		text := strings.Join(append(append([]string{o.Title, o.Subtitle, o.Narrative}, o.Facts...), o.Concepts...), " ")
		set.Docs = append(set.Docs, Doc{ID: o.ID, Project: o.Project, Text: text, Time: o.CreatedAt})
	}
	for _, q := range f.Questions {
		var ev []string
		for _, t := range q.Expect {
			id, ok := byTitle[t]
			if !ok {
				return nil, fmt.Errorf("load coding set: question %q expects %q, which no observation is titled", q.Text, t)
			}
			ev = append(ev, id)
		}
		set.Questions = append(set.Questions, Question{Project: q.Project, Text: q.Text, Evidence: ev})
	}
	return set, nil
}
