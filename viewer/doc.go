// Package viewer is the node's web viewer: its embedded assets (plain ES modules and CSS, no
// build step, nothing fetched at run time), the one-time login code that becomes a browser
// session, and the rules a browser request must pass (session cookie, CSRF token, strict
// security headers). The api package serves it on the node's own port.
//
// Login: `memnode viewer` asks the node (bearer token, over the socket) for a code valid
// for CodeTTL and prints http://127.0.0.1:PORT/login?code=…; the first GET of that URL
// exchanges the code for a session (an HttpOnly, SameSite=Strict cookie holding a random
// session ID, never the token) and a CSRF token, and redirects to the viewer, so the code
// leaves the address bar at once. A code works once. Every state-changing browser request
// carries the CSRF token in the CSRFHeader header, which a page of another site cannot set
// (it cannot read the cookie, and a cross-origin request with a custom header is
// preflighted and refused by the Origin check).
//
// Speed: the page names its scripts under /app/VERSION/ (Version, a hash of the embedded
// files) so a browser caches them for good, and the api package puts the feed's first
// page (FeedPage records) into the page of a logged-in browser as a JSON data block; a
// reload paints the feed with no request at all.
package viewer
