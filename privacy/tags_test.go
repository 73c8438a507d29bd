package privacy

import (
	"strings"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

func TestStripTags(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"no tags", "plain text", "plain text"},
		{"other tags kept", "<b>bold</b> <div class=x>y</div>", "<b>bold</b> <div class=x>y</div>"},
		{"private", "a <private>secret</private> b", "a  b"},
		{"context tag", "x<memnode-context>old memory</memnode-context>y", "xy"},
		{"claude-mem-context", "x<claude-mem-context>m</claude-mem-context>y", "xy"},
		{"system-reminder", "x<system-reminder>r</system-reminder>y", "xy"},
		{"system_instruction", "x<system_instruction>i</system_instruction>y", "xy"},
		{"system-instruction", "x<system-instruction>i</system-instruction>y", "xy"},
		{"persisted-output", "x<persisted-output>o</persisted-output>y", "xy"},
		{"upper case", "a<PRIVATE>s</PRIVATE>b", "ab"},
		{"mixed case", "a<Private>s</pRiVaTe>b", "ab"},
		{"attributes", `a<private id="1" reason='x'>s</private>b`, "ab"},
		{"attribute with newline", "a<system-reminder\n type=\"warning\">s</system-reminder>b", "ab"},
		{"multi-line content", "a<private>line1\nline2\r\nline3</private>b", "ab"},
		{"closing tag with space", "a<private>s</private >b", "ab"},
		{"two blocks", "a<private>1</private>b<private>2</private>c", "abc"},
		{"nested same name", "<private>a<private>b</private>c</private>", ""},
		{"nested then text", "x<private>a<private>b</private>c</private>y", "xy"},
		{"deep nesting", "x" + strings.Repeat("<private>", 50) + "s" + strings.Repeat("</private>", 50) + "y", "xy"},
		{"nested different", "x<private>a<system-reminder>b</system-reminder>c</private>y", "xy"},
		{"interleaved", "x<private>a<system-reminder>b</private>c</system-reminder>y", "xy"},
		{"interleaved other way", "x<system-reminder>a<private>b</system-reminder>c</private>y", "xy"},
		{"unclosed", "keep <private>secret forever", "keep "},
		{"unclosed inner", "x<private>a<private>b</private> still hidden", "x"},
		{"unclosed after closed", "x<private>a</private>y<private>z", "xy"},
		{"no '>'", "keep <private secret", "keep "},
		{"name at end", "keep <private", "keep "},
		{"stray closing hides what precedes it", "a</private>b", "b"},
		{"stray closing after a closed block", "x<private>a</private>y</private>z", "z"},
		{"stray closing of other tag inside", "x<private>a</system-reminder>b</private>y", "y"},
		{"stray closing keeps outer tag open", "x<private>a</system-reminder>b", ""},
		{"self-closing", "a<private/>b<private />c", "abc"},
		{"not a memory tag: longer name", "a<private-key>b</private-key>c<privatex>d", "a<private-key>b</private-key>c<privatex>d"},
		{"not a memory tag: prefix", "a<priv>b</priv>c<system>d", "a<priv>b</priv>c<system>d"},
		{"lone angle brackets", "a < b > c <", "a < b > c <"},
		{"less-than before tag", "if a<b {<private>s</private>}", "if a<b {}"},
		{"join forms new tag", "<pri<private>x</private>vate>y</private>z", "z"},
		{"join forms tag pair", "a<pri<private>x</private>vate>y</pri<private>x</private>vate>b", "ab"},
		{"join forms closing tag", "<private>a</pri<private>x</private>vate>b", ""},
		{"fixture prompt", "Find out why and fix it. <private>staging password is SECRET-hunter2</private>", "Find out why and fix it. "},
		{"curl header", "curl -s -H 'Authorization: Bearer <private>SECRET-eyJhbGciOi</private>' localhost", "curl -s -H 'Authorization: Bearer ' localhost"},
		{"utf-8 around", "é<private>ü</private>ß", "éß"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StripTags(tt.in)
			if got != tt.want {
				t.Fatalf("StripTags(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := StripTags(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestStripTagsReturnsInputWhenNothingToDo(t *testing.T) {
	for _, in := range []string{"no angle brackets at all", "a <b> c </b> <privacy>"} {
		got := StripTags(in)
		if unsafe.StringData(got) != unsafe.StringData(in) {
			t.Errorf("StripTags(%q) copied its input", in)
		}
	}
	in := strings.Repeat("no tags here, ", 1000)
	if n := testing.AllocsPerRun(100, func() { StripTags(in) }); n != 0 {
		t.Errorf("StripTags allocated %v times on text without '<'", n)
	}
}

func TestStripTagsManySplitLayers(t *testing.T) {
	// Each layer needs one more pass; past the limit the rest is dropped (fail safe).
	layer := "<private>hidden</private>"
	for i := 0; i < 3; i++ {
		layer = "<pri" + layer + "vate>hidden</pri" + layer + "vate>"
	}
	if got := StripTags("before " + layer + " after"); got != "before  after" {
		t.Fatalf("3 layers: got %q", got)
	}
	for i := 3; i < 8; i++ {
		layer = "<pri" + layer + "vate>hidden</pri" + layer + "vate>"
	}
	got := StripTags("before " + layer + " after")
	if hasMemoryTag(got) || strings.Contains(got, "hidden") {
		t.Fatalf("StripTags left a tag or hidden text: %q", got)
	}
	if !strings.HasPrefix(got, "before ") {
		t.Fatalf("StripTags dropped text before the first tag: %q", got)
	}
}

func TestStripTagsLargeInputManyTags(t *testing.T) {
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("visible <private id=\"7\">hidden <private>deeper</private></private> ")
	}
	b.WriteString("<system-reminder>unclosed")
	got := StripTags(b.String())
	if strings.Contains(got, "hidden") || strings.Contains(got, "unclosed") || hasMemoryTag(got) {
		t.Fatal("hidden text survived")
	}
	if want := strings.Count(b.String(), "visible"); strings.Count(got, "visible") != want {
		t.Fatalf("visible text lost: %d of %d", strings.Count(got, "visible"), want)
	}
}

// hasMemoryTag reports whether s still contains an opening or closing memory tag.
func hasMemoryTag(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '<' {
			if tt, _, _ := tagAt(s, i); tt >= 0 {
				return true
			}
		}
	}
	return false
}

// hasOpeningTagNaive is an independent check: lower-case the text and look for "<name"
// followed by a boundary.
func hasOpeningTagNaive(s string) bool {
	l := strings.ToLower(s)
	for _, name := range memoryTags {
		for off := 0; ; {
			i := strings.Index(l[off:], "<"+name)
			if i < 0 {
				break
			}
			e := off + i + 1 + len(name)
			if e == len(l) || strings.IndexByte(">/ \t\n\r\f", l[e]) >= 0 {
				return true
			}
			off = e
		}
	}
	return false
}

func TestStripTagsProperties(t *testing.T) {
	pieces := []string{"<private>", "</private>", "<PRIVATE a=1>", "<private/>", "<system-reminder>",
		"</system-reminder>", "<memnode-context>", "</memnode-context>", "<pri", "vate>", "</pri",
		"<", ">", "/", " ", "\n", "text", "é", "<b>", "</b>", "<persisted-output>", "</persisted-output"}
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOf(rapid.SampledFrom(pieces)).Draw(t, "parts")
		in := strings.Join(parts, "")
		out := StripTags(in)
		if StripTags(out) != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, StripTags(out))
		}
		if hasOpeningTagNaive(out) || hasMemoryTag(out) {
			t.Fatalf("output keeps a memory tag: %q -> %q", in, out)
		}
		if len(out) > len(in) {
			t.Fatalf("output grew: %q -> %q", in, out)
		}
		if !strings.Contains(in, "<") && out != in {
			t.Fatalf("changed text without '<': %q", in)
		}
	})
}

func TestIsProtocolOnly(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"<task-notification><task-id>t1</task-id><status>completed</status></task-notification>", true},
		{"  \n<task-notification id=\"1\">\nx\n</task-notification>\n ", true},
		{"<task-notification>a</task-notification>\n<task-notification>b</task-notification>", true},
		{"<task-notification/>", false},
		{"", false},
		{"   ", false},
		{"hello", false},
		{"please <task-notification>a</task-notification>", false},
		{"<task-notification>a</task-notification> and more", false},
		{"<task-notification>a", false},
		{"<task-notification>a<task-notification>b</task-notification></task-notification>", false},
		{"<task-notificationx>a</task-notificationx>", false},
		{"<task-notification>a</task-notification >", false},
		{"<TASK-NOTIFICATION>a</TASK-NOTIFICATION>", false},
		{"<task-notification>" + strings.Repeat("x", 300<<10) + "</task-notification>", false},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 60 {
			name = name[:60]
		}
		if got := IsProtocolOnly(tt.in); got != tt.want {
			t.Errorf("IsProtocolOnly(%q) = %v, want %v", name, got, tt.want)
		}
	}
}

func TestIsEmptyAfterClean(t *testing.T) {
	if !IsEmptyAfterClean("  <private>SECRET-only-private-prompt do not store</private>\n") {
		t.Error("prompt that is only private is not empty")
	}
	if IsEmptyAfterClean("fix it <private>x</private>") {
		t.Error("prompt with visible text is empty")
	}
}
