package geminicli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/memnode/memnode/platform"
)

// transcriptTail bounds how much of a session file is scanned (its end).
const transcriptTail = 16 << 20

// LastAssistantMessage implements platform.Adapter: the text of the last "gemini" record
// with text in the session file. (AfterAgent passes prompt_response, so this is a fallback.)
// The text is raw: the caller cleans it.
func (Adapter) LastAssistantMessage(path string) (string, error) {
	return lastRecord(path, func(r record) (string, bool) {
		if r.Type != "gemini" {
			return "", false
		}
		var s string
		if json.Unmarshal(r.Content, &s) != nil || strings.TrimSpace(s) == "" {
			return "", false
		}
		return strings.TrimSpace(s), true
	})
}

// LastUserPrompt returns the last prompt the user typed (a "user" record of text parts,
// without the context hooks injected), so that the summary hook can tell a wholly private
// turn. The text is raw: the caller cleans it.
func (Adapter) LastUserPrompt(path string) (string, error) {
	return lastRecord(path, func(r record) (string, bool) {
		if r.Type != "user" {
			return "", false
		}
		var parts []struct {
			Text             *string         `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		}
		if json.Unmarshal(r.Content, &parts) != nil {
			return "", false
		}
		var texts []string
		for _, p := range parts {
			if p.FunctionResponse != nil {
				return "", false
			}
			if p.Text != nil {
				texts = append(texts, *p.Text)
			}
		}
		text := StripHookContext(strings.Join(texts, "\n"))
		return text, strings.TrimSpace(text) != ""
	})
}

// record is one message line of a Gemini CLI session file.
type record struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
}

// lastRecord returns what pick finds in the last message record where it finds anything.
func lastRecord(path string, pick func(record) (string, bool)) (string, error) {
	return ScanTranscript(path, func(line []byte) (string, bool) {
		var r record
		if json.Unmarshal(line, &r) != nil || r.Type == "" {
			return "", false // a header, a "$set" line, a torn first or last line
		}
		return pick(r)
	})
}

// ScanTranscript returns what pick finds in the last line of a JSONL session file (its last
// 16 MiB) where it finds anything. Gemini CLI writes a record again with the same id to
// update it, which is why the tail is read forwards.
func ScanTranscript(path string, pick func(line []byte) (string, bool)) (string, error) {
	f, err := platform.OpenTranscript(path)
	if err != nil {
		return "", fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat transcript: %w", err)
	}
	if off := fi.Size() - transcriptTail; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return "", fmt.Errorf("seek transcript: %w", err)
		}
	}
	found := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, transcriptTail)
	for sc.Scan() {
		if text, ok := pick(sc.Bytes()); ok {
			found = text
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read transcript: %w", err)
	}
	return found, nil
}
