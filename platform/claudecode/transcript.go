package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/memnode/memnode/platform"
)

const (
	transcriptBlock = 64 << 10
	// transcriptScanMax bounds how far back the Stop hook looks for an assistant message.
	transcriptScanMax = 64 << 20
	// transcriptLineMax skips single lines larger than this (huge tool results).
	transcriptLineMax = 16 << 20
)

// LastAssistantMessage implements platform.Adapter.
func (Adapter) LastAssistantMessage(path string) (string, error) { return lastAssistantMessage(path) }

// lastAssistantMessage returns the text of the last assistant message in a JSONL transcript
// that has any text, reading backwards from the end so long transcripts cost little. The
// text is raw: the caller must clean it.
func lastAssistantMessage(path string) (string, error) { return lastEntry(path, assistantText) }

// LastUserPrompt returns the text of the last prompt the user typed (a user message with
// text and no tool result), so that the Stop hook can tell a wholly private turn. The text
// is raw: the caller must clean it.
func (Adapter) LastUserPrompt(path string) (string, error) { return lastEntry(path, userPromptText) }

// lastEntry returns what extract finds in the last transcript line where it finds anything.
func lastEntry(path string, extract func([]byte) (string, bool)) (string, error) {
	f, err := platform.OpenTranscript(path)
	if err != nil {
		return "", fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat transcript: %w", err)
	}
	pos := fi.Size()
	floor := max(pos-transcriptScanMax, 0)
	// carry holds the pieces (latest read first) of a line whose start lies in an earlier
	// block; they are joined only when the line is complete.
	var carry [][]byte
	carryLen := 0
	skipping := false // the current line outgrew transcriptLineMax
	join := func(head []byte) []byte {
		line := make([]byte, 0, len(head)+carryLen)
		line = append(line, head...)
		for i := len(carry) - 1; i >= 0; i-- {
			line = append(line, carry[i]...)
		}
		return line
	}
	buf := make([]byte, transcriptBlock)
	for pos > floor {
		n := min(int64(len(buf)), pos-floor)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && err != io.EOF {
			return "", fmt.Errorf("read transcript: %w", err)
		}
		data := buf[:n]
		for {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			if !skipping {
				if text, ok := extract(join(data[i+1:])); ok {
					return text, nil
				}
			}
			carry, carryLen, skipping = carry[:0], 0, false
			data = data[:i]
		}
		if !skipping && len(data) > 0 {
			carry = append(carry, append([]byte(nil), data...))
			carryLen += len(data)
			if carryLen > transcriptLineMax {
				carry, carryLen, skipping = carry[:0], 0, true
			}
		}
	}
	if !skipping && pos == 0 {
		if text, ok := extract(join(nil)); ok {
			return text, nil
		}
	}
	return "", nil
}

// assistantText extracts the text of one transcript line if it is an assistant message
// with text. Content is a string or an array of parts; text parts are joined.
func assistantText(line []byte) (string, bool) {
	content, ok := messageOf(line, "assistant")
	if !ok {
		return "", false
	}
	text := strings.TrimSpace(promptText(content))
	return text, text != ""
}

// messageOf decodes one transcript line and returns its message content when the line is a
// message of role (by its type or its message's role).
func messageOf(line []byte, role string) (json.RawMessage, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || !bytes.Contains(line, []byte(role)) {
		return nil, false
	}
	var entry struct {
		Type    string `json:"type"`
		Message struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &entry) != nil || (entry.Type != role && entry.Message.Role != role) {
		return nil, false
	}
	return entry.Message.Content, true
}

// userPromptText extracts the text of one transcript line if it is a prompt the user
// typed: a user message whose content is a string or text parts, without tool results.
func userPromptText(line []byte) (string, bool) {
	content, ok := messageOf(line, "user")
	if !ok {
		return "", false
	}
	var parts []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(content, &parts) == nil {
		for _, p := range parts {
			if p.Type == "tool_result" {
				return "", false
			}
		}
	}
	text := promptText(content)
	return text, strings.TrimSpace(text) != ""
}
