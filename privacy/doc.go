// Package privacy removes what must never be stored: content inside memory tags (<private>,
// memnode's injected context, system reminders …) and common secret shapes.
//
// The hook runs it before any byte leaves its process; the node runs it again before
// storage (defence in depth, as in claude-mem).
//
// # Memory tags
//
// StripTags removes these tags together with their content: private, memnode-context
// (ContextTag), claude-mem-context, system-reminder, system_instruction,
// system-instruction, persisted-output. A tag is "<name" or "</name" (ASCII case folded)
// followed by white space, '>', '/' or the end of the text, then anything up to the next
// '>' — so attributes are allowed and <private-key> is not a memory tag.
//
// The scanner is linear (no regular expression, no backtracking) and fails safe:
//   - nested tags of the same name count: <private>a<private>b</private>c</private> hides
//     a, b and c;
//   - text is hidden while any memory tag is open, so interleaved tags hide the union;
//   - an opening tag that is never closed, or a tag whose '>' never comes, hides everything
//     after it;
//   - a closing tag that closes nothing hides everything before it (its opening tag was
//     in an earlier part of the record: another prompt text part, the tool input), the
//     mirror of the unclosed rule; a self-closing <private/> is removed;
//   - removing a region can join its neighbours into a new tag ("<pri" + "vate>"); the
//     output is rescanned, and after four passes whatever follows the first tag left is
//     dropped. The result therefore never contains a memory tag and StripTags is
//     idempotent.
//
// # Secrets
//
// Redact replaces secrets with "[REDACTED:kind]". The detectors and their kinds, in the
// order they run:
//
//	private-key            -----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY----- (RSA,
//	                       EC, OPENSSH, ENCRYPTED, PGP … BLOCK); without END, to the end of
//	                       the text; an END without BEGIN, from the start of the text; a
//	                       bare key body (base64 lines starting MII or b3BlbnNzaC1rZXkt)
//	aws-access-key-id      AKIA/ASIA/ABIA/ACCA + 16 upper-case letters or digits
//	google-api-key         AIza + 30 or more of [0-9A-Za-z_-]
//	github-token           ghp_/gho_/ghu_/ghs_/ghr_ + 30 or more alphanumerics;
//	                       github_pat_ + 30 or more of [A-Za-z0-9_]
//	gitlab-token           glpat- + 20 or more of [A-Za-z0-9_-]
//	slack-token            xoxa-/xoxb-/xoxp-/xoxo-/xoxs-/xoxr- + 10 or more; xapp-N-…
//	slack-webhook          https://hooks.slack.com/services|workflows|triggers/…
//	stripe-key             sk_live_/rk_live_/sk_test_/rk_test_ + 16 or more alphanumerics
//	anthropic-key          sk-ant- + 20 or more of [A-Za-z0-9_-]
//	openai-key             sk-proj-/sk-svcacct-/sk-admin- + 20 or more of [A-Za-z0-9_-];
//	                       sk- + 20 or more alphanumerics
//	npm-token              npm_ + 36 alphanumerics
//	huggingface-token      hf_ + 30 or more alphanumerics
//	webhook-secret         whsec_ + 20 or more base64 characters
//	digitalocean-token     dop_v1_/doo_v1_/dor_v1_ + 64 hex digits
//	sendgrid-key           SG. + … + . + …
//	twilio-key             SK + 32 hex digits
//	pypi-token             pypi-AgE + 50 or more of [A-Za-z0-9_-]
//	jwt                    eyJ… . … . … (three base64url segments)
//	base64-secret          a base64 run encoding password, passwd, secret, token, apikey or
//	                       api_key (at any of the three byte offsets)
//	authorization          the value of an Authorization or Proxy-Authorization header
//	                       ("Authorization: Bearer x", curl -H '…', "Authorization": "…");
//	                       the scheme word (Bearer, Basic, token …) is kept
//	aws-secret-access-key  the value assigned to a key containing "secret" together with
//	                       "access" or "aws" (aws_secret_access_key, SecretAccessKey)
//	secret                 the value assigned to any other key whose name contains
//	                       password, passwd, passphrase, pass, secret, token, apikey,
//	                       api_key, api-key, accesskey, access_key, privatekey,
//	                       private_key, credential(s), auth, dsn or cookie
//	secret (command line)  --password X and other secret-named flags with a separate
//	                       value, -u/--user user:X, mysql -pX, sshpass -p X, the password
//	                       argument of htpasswd -b
//	url-credentials        the user:password part of scheme://user:password@host (after
//	                       the assignments, so DSN=postgres://u:p@h is one secret)
//
// Assignments are KEY=value, export KEY=value, KEY: value, "KEY": "value", 'KEY': 'value',
// --key=value and ?key=value&…; the key is kept, the value redacted (inside its quotes,
// or up to white space/&/;/,/)/]/} for '=' and to the end of the line for ':'). Key words
// match case-insensitively but not inside longer words (tokens, max_tokens, author,
// passenger, bypass). So that ordinary code survives, no value is redacted after :=, ==,
// !=, <=, >=, =>, ::, and no unquoted value that contains parentheses, ends in , ; { [,
// is a dotted identifier after " = " (cfg.Password), is a number, a boolean, null/nil/none,
// a type name, or starts with $ { ( [ < % * & ! # (references and templates).
//
// Not detected: secrets without a recognisable shape or key (a bare password in prose,
// a random hex string), values split across lines, keys longer than 64 bytes. See
// SECRETS.md for examples.
//
// Redact first scans the text once for cheap hints (literal prefixes, separators with a
// secret-looking key, a flag given a password) and runs only the detectors that could
// match; text without hints is returned unchanged without allocating. The same pass finds
// the anchors of every token shape (a table of the byte pairs they hold at a few trigger
// bytes): a new shape costs no new pass. Token shapes are found with strings.Index on
// their literal prefix and then checked by an RE2 expression anchored there; PEM blocks,
// JWTs, URL credentials and assignments are hand-written scanners. Every path is linear
// in the input, including adversarial input (see the adversarial benchmarks).
//
// # JSON
//
// CleanJSON walks JSON tokens (same grammar as encoding/json), runs Clean on the decoded
// text of every string and object key, and writes the document compactly. Numbers keep
// their text; unchanged strings keep their bytes. Empty input yields "null"; invalid input
// yields an error wrapping ErrInvalidJSON.
package privacy
