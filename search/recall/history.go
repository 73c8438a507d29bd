package recall

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memnode/memnode/importer"
)

// historyFile is the coding-history question set's file (testdata/coding-history.json).
type historyFile struct {
	Questions []struct {
		Project string   `json:"project"`
		Text    string   `json:"text"`
		Expect  []string `json:"expect"` // IDs of the observations that answer it
	} `json:"questions"`
}

// LoadCodingHistory builds the coding-history set: every record of the export at corpus
// (memnode's JSONL format, gzipped: ../shared/data/coding-history/corpus.jsonl.gz) is
// what memnode stores, sessions, prompts and summaries included, so the default search
// meets the same crowd a user's node holds; the observations are the documents the
// baselines index and the questions of setFile name as evidence.
func LoadCodingHistory(corpus, setFile string) (*Set, error) {
	data, err := os.ReadFile(setFile)
	if err != nil {
		return nil, fmt.Errorf("load coding history: %w", err)
	}
	var f historyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("load coding history %s: %w", setFile, err)
	}
	file, err := os.Open(corpus)
	if err != nil {
		return nil, fmt.Errorf("load coding history: %w", err)
	}
	defer file.Close()
	gz, err := gzip.NewReader(file)
	if err != nil {
		return nil, fmt.Errorf("load coding history %s: %w", corpus, err)
	}
	set := &Set{Name: "coding-history"}
	known := map[string]bool{}
	r := importer.NewReader(gz)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("load coding history %s: %w", corpus, err)
		}
		if rec.Kind == importer.KindHeader {
			continue
		}
		set.Records = append(set.Records, rec)
		if o := rec.Observation; o != nil {
			known[o.ID] = true
			text := strings.Join(append(append(append([]string{o.Title, o.Subtitle, o.Narrative}, o.Facts...), o.Concepts...), o.FilesModified...), " ")
			set.Docs = append(set.Docs, Doc{ID: o.ID, Project: o.Project, Text: text, Time: o.CreatedAt})
		}
	}
	for _, q := range f.Questions {
		for _, id := range q.Expect {
			if !known[id] {
				return nil, fmt.Errorf("load coding history: question %q expects %s, which is no observation of the corpus", q.Text, id)
			}
		}
		set.Questions = append(set.Questions, Question{Project: q.Project, Text: q.Text, Evidence: q.Expect})
	}
	return set, nil
}
