package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/privacy"
)

// systemPrompt makes the model an observer of someone else's session, as claude-mem's init
// prompt does, and pins the answer format.
const systemPrompt = `You are a memory observer for an AI coding session. You do not do the work; you watch the tool calls of the primary session and record what is worth remembering in later sessions: decisions, discoveries, fixes, features, refactors and changes, with the concrete facts (file names, functions, commands, error messages, numbers) that make them useful.
Answer only with XML in the format the user message asks for. Non-XML text is discarded.`

const observationFormat = `Return one or more <observation> blocks (related tool calls may share one observation), or an empty response if nothing here is worth remembering. Concrete debugging findings, root causes and decisions count as durable discoveries and should be recorded. Never reply with prose such as "Skipping"; an empty response is the way to skip.

<observation>
  <type>one of: bugfix, feature, refactor, change, discovery, decision</type>
  <title>short title, at most 80 characters</title>
  <subtitle>one sentence</subtitle>
  <facts><fact>one concrete fact</fact></facts>
  <narrative>2-4 sentences: what happened and why it matters</narrative>
  <concepts><concept>keyword</concept></concepts>
  <files_read><file>path</file></files_read>
  <files_modified><file>path</file></files_modified>
</observation>`

const summaryFormat = `--- MODE SWITCH: SESSION SUMMARY ---
Wrap your whole answer in one <summary> block. Do not write <observation> blocks; they are discarded.

<summary>
  <request>what the user asked for</request>
  <investigated>what was explored</investigated>
  <learned>what was learned</learned>
  <completed>what was completed</completed>
  <next_steps>what should happen next</next_steps>
  <notes>anything else worth keeping</notes>
</summary>`

// Caps on what is sent: the per-call cap keeps one huge tool output from crowding out the
// rest of a batch; the per-request cap bounds the cost of one request.
const (
	DefaultMaxCallBytes    = 8 << 10
	DefaultMaxRequestBytes = 48 << 10
)

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// capText truncates s to at most n bytes on a rune boundary and says how much was cut.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[truncated %d bytes]", len(s)-cut)
}

// rawJSON renders tool input/output readably: indented JSON, or a JSON string unquoted.
func rawJSON(m json.RawMessage) string {
	m = bytes.TrimSpace(m)
	if len(m) == 0 {
		return ""
	}
	var s string
	if m[0] == '"' && json.Unmarshal(m, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Indent(&buf, m, "", "  ") == nil {
		return buf.String()
	}
	return string(m)
}

// renderCall renders one tool call, capped at maxBytes of content (input and output share
// the cap; the output gets the larger part because it carries the findings).
func renderCall(i int, c ai.ToolCall, maxBytes int) string {
	// Callers pass stripped and redacted calls; cleaning again here is defence in depth, since
	// this is the last point before bytes leave the machine. Escape before capping so the cap
	// bounds what is really sent.
	in := xmlEscaper.Replace(privacy.Clean(rawJSON(c.ToolInput)))
	out := xmlEscaper.Replace(privacy.Clean(rawJSON(c.ToolResponse)))
	inCap := maxBytes / 3
	if len(out) < maxBytes-inCap {
		inCap = maxBytes - len(out)
	}
	in = capText(in, max(inCap, 0))
	out = capText(out, max(maxBytes-len(in), 0))
	var b strings.Builder
	fmt.Fprintf(&b, "<tool_call index=\"%d\">\n", i)
	fmt.Fprintf(&b, "  <what_happened>%s</what_happened>\n", xmlEscaper.Replace(c.ToolName))
	if !c.At.IsZero() {
		fmt.Fprintf(&b, "  <occurred_at>%s</occurred_at>\n", c.At.UTC().Format(time.RFC3339))
	}
	if c.Cwd != "" {
		fmt.Fprintf(&b, "  <working_directory>%s</working_directory>\n", xmlEscaper.Replace(capText(privacy.Clean(c.Cwd), 256)))
	}
	fmt.Fprintf(&b, "  <parameters>%s</parameters>\n", in)
	fmt.Fprintf(&b, "  <outcome>%s</outcome>\n", out)
	b.WriteString("</tool_call>\n")
	return b.String()
}

// observationPrompt builds one prompt for a batch of calls of one session. The user prompt
// is written once per distinct value, not once per call: that is where batching saves tokens.
func observationPrompt(calls []ai.ToolCall, maxCallBytes int) string {
	var b strings.Builder
	b.WriteString("<observed_from_primary_session>\n")
	if len(calls) > 0 && calls[0].Project != "" {
		fmt.Fprintf(&b, "<project>%s</project>\n", xmlEscaper.Replace(capText(calls[0].Project, 256)))
	}
	lastPrompt := ""
	for i, c := range calls {
		if c.Prompt != "" && c.Prompt != lastPrompt {
			fmt.Fprintf(&b, "<user_request>%s</user_request>\n", xmlEscaper.Replace(capText(privacy.Clean(c.Prompt), maxCallBytes/4)))
			lastPrompt = c.Prompt
		}
		b.WriteString(renderCall(i+1, c, maxCallBytes))
	}
	b.WriteString("</observed_from_primary_session>\n\n")
	b.WriteString(observationFormat)
	return b.String()
}

// splitBatches groups calls into requests whose rendered prompt stays under maxRequestBytes.
// A single call always fits because renderCall caps it at maxCallBytes (< maxRequestBytes).
func splitBatches(calls []ai.ToolCall, maxCallBytes, maxRequestBytes int) [][]ai.ToolCall {
	var out [][]ai.ToolCall
	var cur []ai.ToolCall
	size := len(observationFormat) + 128
	for i, c := range calls {
		n := len(renderCall(i+1, c, maxCallBytes)) + min(len(c.Prompt), maxCallBytes/4) + 32
		if len(cur) > 0 && size+n > maxRequestBytes {
			out = append(out, cur)
			cur, size = nil, len(observationFormat)+128
		}
		cur = append(cur, c)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// summaryPrompt builds the end-of-session prompt from the request, the final assistant
// message and the session's observations (titles and subtitles only, newest kept if capped).
func summaryPrompt(in ai.SessionInput, maxRequestBytes int) string {
	var b strings.Builder
	b.WriteString("<session>\n")
	if in.Project != "" {
		fmt.Fprintf(&b, "<project>%s</project>\n", xmlEscaper.Replace(capText(in.Project, 256)))
	}
	budget := maxRequestBytes - len(summaryFormat) - 256
	req := capText(privacy.Clean(in.Request), budget/4)
	last := capText(privacy.Clean(in.LastAssistantMessage), budget/3)
	fmt.Fprintf(&b, "<user_request>%s</user_request>\n", xmlEscaper.Replace(req))
	left := budget - len(req) - len(last)
	var lines []string
	for i := len(in.Observations) - 1; i >= 0; i-- {
		o := in.Observations[i]
		line := fmt.Sprintf("<observation type=\"%s\">%s", xmlEscaper.Replace(o.Type), xmlEscaper.Replace(privacy.Clean(o.Title)))
		if o.Subtitle != "" {
			line += " — " + xmlEscaper.Replace(privacy.Clean(o.Subtitle))
		}
		line += "</observation>\n"
		if left-len(line) < 0 {
			break
		}
		left -= len(line)
		lines = append(lines, line)
	}
	b.WriteString("<observations>\n")
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i])
	}
	b.WriteString("</observations>\n")
	fmt.Fprintf(&b, "<last_assistant_message>%s</last_assistant_message>\n", xmlEscaper.Replace(last))
	b.WriteString("</session>\n\n")
	b.WriteString(summaryFormat)
	return b.String()
}
