package viewer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
)

// focused is a JS expression naming the focused element: its id, else its data-id, else
// its text.
const focused = `(() => { const a = document.activeElement; return a.id || a.dataset.id || a.textContent.trim().slice(0, 40); })()`

// TestViewerKeyboard uses the viewer with the keyboard only (real key events into a real
// Chromium against a real node): Tab walks header → filters → cards with a visible focus;
// j/k select cards, Enter opens one and Esc comes back to it, t opens its timeline, x opens
// its toggles, # asks before forgetting; / focuses search, where typed letters are text and
// never shortcuts; g d / g f / g s switch pages; ? shows the help.
func TestViewerKeyboard(t *testing.T) {
	t.Parallel()
	b, in, c := e2ekit.StartViewerNode(t)
	words := []string{"alphaword", "bravoword", "charlieword"} // the feed shows them newest first
	ids := map[string]string{}
	for _, w := range words {
		res, err := c.SaveNote(context.Background(), apitype.Note{Project: "keysproj", Title: "Note " + w, Text: "What we learned about " + w + ".\nSecond line."})
		if err != nil {
			t.Fatal(err)
		}
		ids[w] = res.ID
	}
	e2ekit.LoginViewer(t, b, in, 3)
	card := func(i int) string { return fmt.Sprintf(`document.querySelectorAll('#feed .card')[%d]`, i) }
	wantFocus := func(what, expr string) {
		t.Helper()
		b.WaitJS(what, fmt.Sprintf(`document.activeElement === (%s)`, expr), 5*time.Second)
	}

	// Tab order: skip link, the pages, the header's buttons, the filters, then the cards.
	var stops []string
	for range 40 {
		b.Press(kb.Tab)
		s := e2ekit.Eval[string](b, focused)
		if len(stops) == 0 || stops[len(stops)-1] != s {
			stops = append(stops, s)
		}
		if e2ekit.Eval[bool](b, `document.activeElement.matches('#feed .card')`) {
			break
		}
	}
	want := []string{"Skip to content", "Feed", "Search", "Devices", "Team", "Settings", "Logs", "help", "theme",
		"f-project", "f-device", "f-platform", "f-type", "f-since", "f-until", "Write a note", ids["charlieword"]}
	if strings.Join(stops, " → ") != strings.Join(want, " → ") {
		t.Errorf("Tab stops:\n got %s\nwant %s", strings.Join(stops, " → "), strings.Join(want, " → "))
	}
	// The focus is visible: :focus-visible holds and draws an outline.
	if !e2ekit.Eval[bool](b, `document.activeElement.matches(':focus-visible') && getComputedStyle(document.activeElement).outlineStyle !== 'none'`) {
		t.Error("the focused card shows no focus outline")
	}

	b.Press("j")
	wantFocus("j to select the second card", card(1))
	b.Press("k")
	wantFocus("k to select the first card", card(0))
	b.Press("jjj") // the last card stays selected at the end of the list
	wantFocus("j to stop at the last card", card(2))
	if n := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed .card.selected').length`); n != 1 {
		t.Errorf("%v cards marked selected, want 1", n)
	}
	b.Shot("keys-feed")

	b.Press("k")
	wantFocus("k to select bravo", card(1))
	b.Press(kb.Enter)
	b.WaitJS("Enter to open the record", fmt.Sprintf(`location.hash === %q && document.querySelector('#record')`, "#/record/"+ids["bravoword"]), 10*time.Second)
	b.Press(kb.Escape)
	b.WaitJS("Esc back to the feed, bravo selected again", fmt.Sprintf(`location.hash === '#/feed' && document.activeElement.dataset.id === %q && document.activeElement.classList.contains('selected')`, ids["bravoword"]), 10*time.Second)

	b.Press("x")
	if !e2ekit.Eval[bool](b, `document.activeElement.classList.contains('open') && !!document.activeElement.querySelector('.more:not([hidden]) .sec')`) {
		t.Error("x did not open the selected card's details")
	}
	b.Press("#")
	b.WaitJS("# to ask before forgetting", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
	b.Press("j") // a dialog has the keyboard: no shortcut behind it
	b.Press(kb.Escape)
	b.WaitJS("Esc to cancel the forget", `!document.querySelector('dialog[open]')`, 5*time.Second)
	if n := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed .card').length`); n != 3 {
		t.Fatalf("after a cancelled forget the feed has %v cards", n)
	}
	if got := e2ekit.Eval[string](b, `document.querySelector('#feed .card.selected')?.dataset.id || ''`); got != ids["bravoword"] {
		t.Errorf("j behind the dialog moved the selection to %q", got)
	}

	b.Press("t")
	b.WaitJS("t to open the timeline", fmt.Sprintf(`location.hash === %q && document.querySelector('#timeline .hit')`, "#/record/"+ids["bravoword"]+"/timeline"), 10*time.Second)
	b.Press("j") // the first j lands on the record the timeline is around
	wantFocus("j to select the timeline's anchor", `document.querySelector('#timeline .hit.anchor')`)
	b.Press("j")
	wantFocus("j to select the next row", `document.querySelector('#timeline .hit.anchor').nextElementSibling`)
	b.Press(kb.Escape)
	b.WaitJS("Esc back to the feed", `location.hash === '#/feed' && document.querySelector('#feed .card')`, 10*time.Second)

	b.Press("?")
	b.WaitJS("? to show the help", `document.querySelector('#keys-help[open]')`, 5*time.Second)
	if txt := e2ekit.Eval[string](b, `document.getElementById('keys-help').textContent`); !strings.Contains(txt, "Next / previous card") {
		t.Errorf("help says %q", txt)
	}
	b.Shot("keys-help")
	b.Press(kb.Escape)
	b.WaitJS("Esc to close the help", `!document.querySelector('#keys-help[open]')`, 5*time.Second)

	// / focuses search; letters typed there are text, never shortcuts.
	b.Press("/")
	b.WaitJS("/ to focus the search box", `location.hash === '#/search' && document.activeElement.id === 's-query'`, 10*time.Second)
	b.Press("gdj")
	testkit.WaitForState(t, "the typed text in the search box", 5*time.Second, func() (bool, string) {
		v := e2ekit.Eval[string](b, `document.getElementById('s-query').value + ' (focus: ' + document.activeElement.id + ')'`)
		return v == "gdj (focus: s-query)", v
	})
	if h := e2ekit.Eval[string](b, `location.hash`); h != "#/search" {
		t.Fatalf("typing g d in the search box switched to %s", h)
	}
	b.Do("clear the box", chromedp.Evaluate[chromedp.Void](`document.getElementById('s-query').value = ''`))
	b.Press("bravoword" + kb.Enter)
	b.WaitJS("the hit", `document.querySelector('#results .hit')`, 10*time.Second)
	b.Press(kb.Escape)
	b.WaitJS("Esc to leave the box", `document.activeElement.id !== 's-query'`, 5*time.Second)
	b.Press("j")
	wantFocus("j to select the hit", `document.querySelector('#results .hit')`)
	b.Press(kb.Enter)
	b.WaitJS("Enter to open the hit's timeline", `document.querySelector('#timeline .hit.anchor')`, 10*time.Second)

	for _, k := range []struct{ keys, page string }{{"gd", "devices"}, {"gc", "settings"}, {"gl", "logs"}, {"gt", "team"}, {"gs", "search"}, {"gf", "feed"}} {
		if k.page == "feed" {
			b.Press(kb.Escape) // the search page focused its box: leave it first
		}
		b.Press(k.keys)
		b.WaitJS("g "+k.keys[1:]+" to open "+k.page, fmt.Sprintf(`location.hash === '#/%s' && document.querySelector('nav a[aria-current=page]')?.dataset.page === '%s'`, k.page, k.page), 10*time.Second)
	}
}
