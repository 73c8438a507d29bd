package viewer

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
)

// ContentSecurityPolicy allows the viewer's own scripts, styles and API only: no inline
// script, no other origin, never framed.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// SetSecurityHeaders sets the headers every answer of the node carries, page or API.
func SetSecurityHeaders(h http.Header) {
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// FeedPage is how many cards the feed draws per page (feed.js's PAGE); the node puts the
// first page into the viewer's HTML.
const FeedPage = 50

//go:embed static
var static embed.FS

// Version names the assets' contents (a hash of every file): the page asks for its scripts
// and styles under /app/VERSION/, which a browser may cache for good, since a binary with
// other assets has another version.
func Version(assets fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash the viewer's assets: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Assets are the viewer's files: index.html at the root, the rest beside it.
func Assets() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}
