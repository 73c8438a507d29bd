// Package viewer holds the web viewer's tests in a real Chromium (chromedp) against real
// memnode processes. Test files only; helpers in internal/e2ekit. Each test owns its nodes and
// its browser (profile in a temp dir), so the tests run in parallel (t.Parallel), but for
// TestViewerInBrowser, which asserts how fast a record appears and the first paint: it runs
// first, alone.
package viewer
