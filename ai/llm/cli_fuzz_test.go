package llm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseCLIOutput: the parsers of the agent CLIs' output never panic, keep token counts
// in [0, maxTokens], keep failure texts bounded, and a result they accept as an answer is
// then validated like any provider's (ParseObservations never panics on it either).
func FuzzParseCLIOutput(f *testing.F) {
	for _, s := range []string{
		claudeOK,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key"}`,
		`{"type":"result","is_error":false,"result":"x","usage":{"input_tokens":-5,"output_tokens":99999999999999999}}`,
		`{"type":"result","modelUsage":{"a":{"inputTokens":9223372036854775807,"outputTokens":9223372036854775807},"b":{"inputTokens":9223372036854775807}}}`,
		"warning: something\n" + claudeOK,
		`{"type":"item.completed","item":{"type":"agent_message","text":"<observation><title>t</title></observation>"}}` + "\n" + `{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}`,
		`{"type":"turn.failed","error":{"message":"429 Too Many Requests"}}`,
		`{"response":"<observation><title>t</title></observation>","stats":{"models":{"g":{"tokens":{"prompt":10,"candidates":3,"total":20}}}}}`,
		`{"error":{"type":"Error","message":"quota","code":"429"}}`,
		"{\n  \"response\": \"pretty\"\n}",
		"", "{", "null", `{"type":"result","result":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		for kind, spec := range cliSpecs {
			r, err := spec.parse([]byte(out))
			if err != nil {
				continue
			}
			if r.InputTokens < 0 || r.OutputTokens < 0 || r.InputTokens > maxTokens || r.OutputTokens > maxTokens {
				t.Fatalf("%s: tokens %d/%d out of range", kind, r.InputTokens, r.OutputTokens)
			}
			if len(r.Failure) > 1100 || len(r.Model) > 110 {
				t.Fatalf("%s: failure or model unbounded (%d, %d bytes)", kind, len(r.Failure), len(r.Model))
			}
			if r.Status != 0 && (r.Status < 100 || r.Status > 599) {
				t.Fatalf("%s: status %d", kind, r.Status)
			}
			if r.Failed && r.Text != "" && kind != KindClaudeCode {
				t.Fatalf("%s: a failed run returned an answer", kind)
			}
			if len(r.Text) > len(out) && utf8.ValidString(out) {
				t.Fatalf("%s: answer longer than the output", kind)
			}
			obs, _ := ParseObservations(r.Text)
			for _, o := range obs {
				if len(o.Title) > maxTitle+len("…") || strings.Count(o.Title, "\n") > 0 && len(o.Title) > maxTitle*4 {
					t.Fatalf("%s: title unbounded", kind)
				}
			}
		}
	})
}
