package privacy

import "strings"

// Passwords given on a command line, which no KEY=value shape announces:
//
//	--password X, --db-password X, --api-key X, --token X …  (the flag's value)
//	curl -u user:X, --user user:X                             (after the colon)
//	mysql -pX, mysqldump -pX, mariadb -pX                     (attached only: "-p X" prompts)
//	sshpass -p X, sshpass -pX
//	htpasswd -b file user X, htpasswd -nb user X              (the positional password)

// secretFlagWords end the name of a flag whose value is a secret; the word must start the
// name or follow '-' or '_' (so --bypass does not count).
var secretFlagWords = [...]string{"password", "passwd", "passphrase", "pass", "token", "secret", "api-key", "apikey", "api_key", "access-key", "secret-key"}

// passwordCommands take an attached -pPASSWORD; sshpass also a separate one.
var passwordCommands = []string{"mysql", "mysqldump", "mysqladmin", "mariadb", "mariadb-dump", "sshpass", "7z", "7za"}

// shortSecretFlags are short flags whose separate argument is a password or passphrase,
// for the commands that give them that meaning.
var shortSecretFlags = map[byte][]string{
	'w': {"ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldappasswd", "ldapwhoami", "ldapcompare", "ldapmodrdn"},
	'N': {"ssh-keygen"},
	'P': {"ssh-keygen", "zip", "unzip"},
	'a': {"redis-cli"},
	'k': {"openssl"},
}

// maxCommandLookback bounds how far back a -p flag looks for its command.
const maxCommandLookback = 256

// commandLineHint reports whether s[i] ('-') may start a flag: it begins a word and a
// letter or '-' follows.
func commandLineHint(s string, i int) bool {
	if i > 0 && !isBlank(s[i-1]) || i+1 >= len(s) {
		return false
	}
	c := s[i+1]
	return c == '-' || 'a' <= c && c <= 'z' || c == 'N' || c == 'P'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// cmdLineSecret reports whether the flag at s[i] (commandLineHint holds) is given a secret.
func cmdLineSecret(s string, i int) bool {
	if _, _, ok := flagSecret(s, i); ok {
		return true
	}
	_, _, ok := htpasswdSecret(s, i)
	return ok
}

// redactCommandLine replaces the passwords of the shapes above.
func redactCommandLine(s string) string {
	sp := splice{s: s}
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '-')
		if k < 0 {
			break
		}
		pos := i + k
		i = pos + 1
		if !commandLineHint(s, pos) {
			continue
		}
		start, end, ok := flagSecret(s, pos)
		if !ok {
			if start, end, ok = htpasswdSecret(s, pos); !ok {
				continue
			}
		}
		if start < sp.last {
			continue
		}
		sp.replace(start, end, kindSecret)
		i = end
	}
	return sp.String()
}

// flagSecret looks at the flag at s[pos] and returns the secret it is given.
func flagSecret(s string, pos int) (int, int, bool) {
	if s[pos+1] == '-' {
		n := pos + 2
		for n < len(s) && n-pos <= maxKeyLen && (isWordByte(s[n]) || s[n] == '-') {
			n++
		}
		name := strings.ToLower(s[pos+2 : n])
		if n >= len(s) || !isBlank(s[n]) || s[n] == '\n' {
			return 0, 0, false
		}
		switch {
		case name == "user":
			return afterColon(s, n)
		case isSecretFlag(name):
			return flagArg(s, n)
		}
		return 0, 0, false
	}
	if pos+2 >= len(s) {
		return 0, 0, false
	}
	if strings.HasPrefix(s[pos+1:], "passin ") || strings.HasPrefix(s[pos+1:], "passout ") {
		// openssl -passin pass:X (env:VAR and file:PATH name no secret).
		if commandIn(s, pos, []string{"openssl"}) == "" {
			return 0, 0, false
		}
		start, end, ok := flagArg(s, pos+1+strings.IndexByte(s[pos+1:], ' '))
		if !ok || !strings.HasPrefix(s[start:end], "pass:") || end-start == 5 {
			return 0, 0, false
		}
		return start + 5, end, true
	}
	if cmds, ok := shortSecretFlags[s[pos+1]]; ok && isBlank(s[pos+2]) && s[pos+2] != '\n' && commandIn(s, pos, cmds) != "" {
		return flagArg(s, pos+2)
	}
	switch s[pos+1] {
	case 'u':
		if isBlank(s[pos+2]) && s[pos+2] != '\n' {
			return afterColon(s, pos+2)
		}
	case 'p':
		cmd := commandBefore(s, pos)
		if cmd == "" {
			return 0, 0, false
		}
		if !isBlank(s[pos+2]) {
			return flagArg(s, pos+2)
		}
		if cmd == "sshpass" && s[pos+2] != '\n' {
			return flagArg(s, pos+2)
		}
	}
	return 0, 0, false
}

func isSecretFlag(name string) bool {
	for _, w := range secretFlagWords {
		if strings.HasSuffix(name, w) {
			b := len(name) - len(w)
			if b == 0 || name[b-1] == '-' || name[b-1] == '_' {
				return true
			}
		}
	}
	return false
}

// flagArg returns the argument at s[p:] when it may be a secret: references ($PW), other
// flags, numbers and redaction markers are not.
func flagArg(s string, p int) (int, int, bool) {
	start, end := rawArg(s, p)
	v := s[start:end]
	if v == "" || v[0] == '-' || strings.HasPrefix(v, markerPrefix) || isPlaceholder(v) {
		return 0, 0, false
	}
	return start, end, true
}

// rawArg returns the argument at s[p:], after blanks on the same line: inside its quotes
// or up to white space or a shell operator.
func rawArg(s string, p int) (start, end int) {
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		q := s[p]
		end = p + 1
		for end < len(s) && s[end] != q && s[end] != '\n' {
			end++
		}
		return p + 1, end
	}
	end = p
	for end < len(s) && !isArgStop(s[end]) {
		end++
	}
	return p, end
}

func isArgStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', ';', '&', '|', '<', '>', ')':
		return true
	}
	return false
}

// afterColon returns the password of a user:password argument. A numeric uid:gid
// (docker run -u 1000:1000) is not one.
func afterColon(s string, p int) (int, int, bool) {
	start, end, ok := flagArg(s, p)
	if !ok {
		return 0, 0, false
	}
	c := strings.IndexByte(s[start:end], ':')
	if c <= 0 || start+c+1 == end {
		return 0, 0, false
	}
	user, pass := s[start:start+c], s[start+c+1:end]
	if isDigits(user) && isDigits(pass) || strings.HasPrefix(pass, markerPrefix) || isPlaceholder(pass) {
		return 0, 0, false
	}
	return start + c + 1, end, true
}

func isDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

// commandBefore returns the password command (passwordCommands) that the flag at s[pos]
// belongs to, or "": the last such word between the start of the shell command (line
// start, ;, |, &) and pos.
func commandBefore(s string, pos int) string { return commandIn(s, pos, passwordCommands) }

// commandIn returns the last of cmds named between the start of the shell command the
// flag at s[pos] is in and pos, or "".
func commandIn(s string, pos int, cmds []string) string {
	from := max(0, pos-maxCommandLookback)
	seg := s[from:pos]
	if k := strings.LastIndexAny(seg, "\n;|&"); k >= 0 {
		seg = seg[k+1:]
	}
	for _, f := range strings.Fields(seg) {
		f = f[strings.LastIndexByte(f, '/')+1:]
		for _, c := range cmds {
			if f == c {
				return c
			}
		}
	}
	return ""
}

// htpasswdSecret returns the password of "htpasswd -b[…] FILE USER PASSWORD" or
// "htpasswd -nb USER PASSWORD" when s[pos] starts its flags.
func htpasswdSecret(s string, pos int) (int, int, bool) {
	const cmd = "htpasswd"
	b := pos - 1
	for b > 0 && (s[b-1] == ' ' || s[b-1] == '\t') {
		b--
	}
	if b < len(cmd) || s[b-len(cmd):b] != cmd || b > len(cmd) && !(isBlank(s[b-len(cmd)-1]) || s[b-len(cmd)-1] == '/' || s[b-len(cmd)-1] == ';' || s[b-len(cmd)-1] == '|' || s[b-len(cmd)-1] == '&') {
		return 0, 0, false
	}
	batch, noFile := false, false
	p := pos
	for {
		for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
			p++
		}
		if p >= len(s) || s[p] != '-' {
			break
		}
		e := p
		for e < len(s) && !isArgStop(s[e]) {
			e++
		}
		flags := s[p+1 : e]
		batch = batch || strings.IndexByte(flags, 'b') >= 0
		noFile = noFile || strings.IndexByte(flags, 'n') >= 0
		p = e
		if strings.HasSuffix(flags, "C") || strings.HasSuffix(flags, "r") {
			_, p = rawArg(s, p) // the cost or rounds value
		}
	}
	if !batch {
		return 0, 0, false
	}
	want := 3
	if noFile {
		want = 2
	}
	for n := 1; ; n++ {
		start, end, ok := flagArg(s, p)
		if !ok {
			return 0, 0, false
		}
		if n == want {
			return start, end, true
		}
		p = end
		if p < len(s) && (s[p] == '"' || s[p] == '\'') {
			p++
		}
	}
}
