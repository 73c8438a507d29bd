// Package viewer holds the web viewer's tests in a real Chromium (chromedp) against real
// memnode processes. Test files only; helpers in internal/e2ekit.
package viewer
