package e2ekit

import (
	"fmt"

	"github.com/chromedp/chromedp"
)

// Press types keys as real key events (keyDown, char, keyUp) to whatever has the focus.
func (b *Browser) Press(keys string) {
	b.T.Helper()
	b.Do(fmt.Sprintf("press %q", keys), chromedp.KeyEvent(keys))
}
