// Package secretsample makes fake secrets of every kind memnode redacts
// (privacy/SECRETS.md), shaped like the real ones. They are built at run time from a tag,
// so that no secret scanner flags the repository and each test's planted secrets are its
// own: a secret found where it must not be names the way it got there.
package secretsample

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// A Sample is a line of text holding one secret: Redact must turn Secret (a part of Line)
// into a [REDACTED:Kind] marker.
type Sample struct {
	Kind, Line, Secret string
}

// All returns one sample of each kind and shape, unique to tag (two lower-case letters).
func All(tag string) []Sample {
	if len(tag) != 2 {
		panic("secretsample: the tag is two letters")
	}
	g := &gen{tag: tag}
	var ss []Sample
	// add plants the secret sec in line (where "%s" is) as kind.
	add := func(kind, line, sec string) {
		ss = append(ss, Sample{Kind: kind, Line: fmt.Sprintf(line, sec), Secret: sec})
	}
	// The shapes of privacy/redact.go.
	add("aws-access-key-id", "key id %s", "AKIA"+g.upper(16))
	add("aws-secret-access-key", "aws_secret_access_key = %s", g.alnum(40))
	add("google-api-key", "maps key %s", "AIza"+g.alnum(35))
	add("github-token", "git push with %s", "ghp_"+g.alnum(36))
	add("github-token", "GH %s", "github_pat_"+g.alnum(82))
	add("gitlab-token", "gitlab %s", "glpat-"+g.alnum(20))
	add("slack-token", "slack %s", "xoxb-1234567890-"+g.alnum(24))
	add("slack-webhook", "curl -X POST %s", "https://hooks.slack.com/services/T0"+g.upper(8)+"/B0"+g.upper(8)+"/"+g.alnum(24))
	add("stripe-key", "stripe %s", "sk_live_"+g.alnum(24))
	add("anthropic-key", "claude %s", "sk-ant-api03-"+g.alnum(40))
	add("openai-key", "openai %s", "sk-proj-"+g.alnum(40))
	add("npm-token", "npm %s", "npm_"+g.alnum(36))
	add("huggingface-token", "hf %s", "hf_"+g.alnum(34))
	add("webhook-secret", "hook %s", "whsec_"+g.alnum(32))
	add("digitalocean-token", "doctl %s", "dop_v1_"+g.hex(64))
	add("sendgrid-key", "mail %s", "SG."+g.alnum(22)+"."+g.alnum(43))
	add("twilio-key", "twilio %s", "SK"+g.hex(32))
	add("pypi-token", "twine %s", "pypi-AgEIcHlwaS5vcmc"+g.alnum(60))
	add("jwt", "session %s", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI"+g.alnum(20)+"."+g.alnum(43))
	add("private-key", "%s", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow"+g.alnum(58)+"\n"+g.alnum(64)+"\n-----END RSA PRIVATE KEY-----")
	add("private-key", "key body:\n%s", "MIIEow"+g.alnum(58)+"\n"+g.alnum(64)+"\n"+g.alnum(20)+"==")
	add("url-credentials", "DATABASE at postgres://app:%s@db.internal:5432/app", g.pw())
	add("url-credentials", "redis://:%s@cache:6379/0", g.pw())
	add("authorization", "curl -H 'Authorization: Bearer %s' https://api.example.invalid", g.alnum(32))
	add("secret", "DB_PASSWORD=%s", g.pw())
	add("base64-secret", "echo %s | base64 -d", base64.StdEncoding.EncodeToString([]byte("password="+g.alnum(12))))
	// Passwords on a command line.
	add("secret", "psql --password %s db", g.pw())
	add("secret", "mysql -u root -p%s app", g.pw())
	add("secret", "curl -u admin:%s https://example.invalid", g.pw())
	add("secret", "sshpass -p %s ssh host", g.pw())
	add("secret", "htpasswd -b .htpasswd alice %s", g.pw())
	add("secret", "ldapsearch -x -D cn=admin -w %s -b dc=x", g.pw())
	add("secret", "ssh-keygen -t ed25519 -N %s -f key", g.pw())
	add("secret", "unzip -P %s backup.zip", g.pw())
	add("secret", "redis-cli -h cache -a %s ping", g.pw())
	add("secret", "7z x -p%s a.7z", g.pw())
	add("secret", "openssl enc -aes-256-cbc -k %s -in a", g.pw())
	add("secret", "openssl rsa -in k.pem -passin pass:%s", g.pw())
	add("secret", "machine api.example.com login me password %s", g.pw())
	add("secret", "db.example.com:5432:app:postgres:%s", g.pw())

	// Issue 26's shapes (privacy/redact_more.go).
	add("azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=%s==;EndpointSuffix=core.windows.net", g.alnum(86))
	add("azure-sas-token", "https://x.blob.core.windows.net/c?sv=2022-11-02&sp=r&%s%%3D", "sig="+g.alnum(44))
	add("google-oauth-token", "gcloud %s", "ya29."+g.alnum(60))
	add("google-oauth-secret", "oauth %s", "GOCSPX-"+g.alnum(28))
	add("vault-token", "vault %s", "hvs."+g.alnum(90))
	add("atlassian-token", "jira %s", "ATATT3"+g.alnum(180))
	add("shopify-token", "shopify %s", "shpat_"+g.hex(32))
	add("private-key", "    client-key-data: %s", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo"+g.alnum(80))
	add("putty-private-key", "%s", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAAI"+g.alnum(40)+"\nPrivate-MAC: "+g.hex(64))
	add("age-secret-key", "age %s", "AGE-SECRET-KEY-1"+g.upper(58))
	add("databricks-token", "databricks %s", "dapi"+g.hex(32))
	add("linear-api-key", "linear %s", "lin_api_"+g.alnum(40))
	add("postman-key", "postman %s", "PMAK-"+g.hex(24)+"-"+g.hex(34))
	add("grafana-token", "grafana %s", "glc_"+g.alnum(40))
	add("grafana-token", "grafana sa %s", "glsa_"+g.alnum(32)+"_"+g.hex(8))
	add("gitlab-token", "runner %s", "glrt-"+g.alnum(24))
	add("dockerhub-token", "docker %s", "dckr_pat_"+g.alnum(27))
	add("groq-key", "groq %s", "gsk_"+g.alnum(52))
	add("replicate-token", "replicate %s", "r8_"+g.alnum(37))
	add("xai-key", "xai %s", "xai-"+g.alnum(80))
	add("perplexity-key", "pplx %s", "pplx-"+g.alnum(48))
	add("supabase-token", "supabase %s", "sbp_"+g.hex(40))
	add("pulumi-token", "pulumi %s", "pul-"+g.hex(40))
	add("planetscale-token", "pscale %s", "pscale_tkn_"+g.alnum(43))
	add("newrelic-key", "newrelic %s", "NRAK-"+g.upper(27))
	add("doppler-token", "doppler %s", "dp.pt."+g.alnum(43))
	add("heroku-key", "heroku %s", "HRKU-"+g.alnum(36))
	add("notion-token", "notion %s", "ntn_"+g.alnum(46))
	add("sentry-token", "sentry %s", "sntrys_"+g.alnum(60))
	add("square-token", "square %s", "sq0atp-"+g.alnum(22))
	add("fly-token", "fly %s", "fo1_"+g.alnum(43))
	add("mailgun-key", "mailgun %s", "key-"+g.hex(32))
	add("airtable-token", "airtable pat"+g.alnum(14)+".%s", g.hex(64))
	add("telegram-bot-token", "https://api.telegram.org/bot123456789:%s/getMe", "AA"+g.alnum(33))

	// gitleaks' and trufflehog's default rules that issue 26 left out.
	add("gitlab-token", "flags %s", "glffct-"+g.alnum(24))
	add("circleci-token", "circle %s", "CCIPAT_"+g.alnum(22)+"_"+g.hex(40))
	add("buildkite-token", "buildkite %s", "bkua_"+g.hex(40))
	add("sourcegraph-token", "src %s", "sgp_"+g.hex(16)+"_"+g.hex(40))
	add("terraform-token", "TF token "+g.alnum(14)+".%s", "atlasv1."+g.alnum(66))
	add("slack-token", "slack refresh %s", "xoxe-1-"+g.alnum(146))
	add("rubygems-token", "gem push with %s", "rubygems_"+g.hex(48))
	add("clojars-token", "lein deploy %s", "CLOJARS_"+g.alnum(60))
	add("artifactory-key", "jfrog %s", "AKCp"+g.alnum(69))
	add("dockerhub-token", "docker org %s", "dckr_oat_"+g.alnum(32))
	add("alibaba-access-key-id", "aliyun %s", "LTAI"+g.alnum(20))
	add("aws-bedrock-key", "bedrock %s", "ABSK"+g.alnum(132))
	add("cloudflare-token", "wrangler %s", "cfut_"+g.alnum(48))
	add("cloudflare-origin-ca-key", "origin ca %s", "v1.0-"+g.hex(24)+"-"+g.hex(146))
	add("tailscale-key", "tailscale key %s", "tskey-auth-k"+g.alnum(10)+"CNTRL-"+g.alnum(30))
	add("netlify-token", "netlify %s", "nfp_"+g.alnum(36))
	add("supabase-token", "supabase service %s", "sb_secret_"+g.alnum(32))
	add("dynatrace-token", "dynatrace %s", "dt0c01."+g.upper(24)+"."+g.upper(64))
	add("openrouter-key", "openrouter %s", "sk-or-v1-"+g.hex(64))
	add("nvidia-key", "nim %s", "nvapi-"+g.alnum(64))
	add("langsmith-key", "langsmith %s", "lsv2_pt_"+g.hex(32)+"_"+g.hex(10))
	add("pinecone-key", "pinecone %s", "pcsk_"+g.alnum(6)+"_"+g.alnum(63))
	add("tavily-key", "tavily %s", "tvly-dev-"+g.alnum(32))
	add("discord-webhook", "curl -d @msg.json https://%s", "discord.com/api/webhooks/123456789012345678/"+g.alnum(68))
	add("teams-webhook", "curl https://contoso.%s", "webhook.office.com/webhookb2/"+g.hex(8)+"-"+g.hex(4)+"-"+g.hex(4)+"-"+g.hex(4)+"-"+g.hex(12)+"@"+g.hex(8)+"-"+g.hex(4)+"-"+g.hex(4)+"-"+g.hex(4)+"-"+g.hex(12)+"/IncomingWebhook/"+g.hex(32))
	add("stripe-key", "stripe prod %s", "sk_prod_"+g.alnum(24))
	add("braintree-token", "braintree %s", "access_token$production$"+g.hex(16)+"$"+g.hex(32))
	add("shippo-token", "shippo %s", "shippo_live_"+g.hex(40))
	add("flutterwave-key", "flutterwave %s", "FLWSECK-"+g.hex(32)+"-X")
	add("duffel-token", "duffel %s", "duffel_live_"+g.alnum(43))
	add("easypost-key", "easypost %s", "EZAK"+g.alnum(54))
	add("azure-ad-client-secret", "AZURE_CLIENT_SECRET_VALUE %s", "aB3"+"8Q~"+g.alnum(34))
	add("posthog-key", "posthog %s", "phx_"+g.alnum(43))
	add("brevo-key", "brevo %s", "xkeysib-"+g.hex(64)+"-"+g.alnum(16))
	add("mapbox-token", "mapbox %s", "sk.eyJ1Ijoi"+g.alnum(20)+"."+g.alnum(22))
	add("grafana-token", "grafana legacy %s", "eyJrIjoi"+g.alnum(72))
	add("1password-token", "op %s", "ops_eyJ"+g.alnum(250))
	add("typeform-token", "typeform %s", "tfp_"+g.alnum(59))
	add("prefect-key", "prefect %s", "pnu_"+g.alnum(36))
	add("readme-key", "readme %s", "rdme_"+g.hex(70))
	add("infracost-token", "infracost %s", "ico-"+g.alnum(32))
	add("octopus-key", "octopus %s", "API-"+g.upper(26))
	add("facebook-token", "graph %s", "EAAC"+g.alnum(120))
	add("jwt", "  session: %s", "ZXlK"+g.alnum(60))
	add("kubernetes-secret", "kind: Secret\ntype: Opaque\ndata:\n  db-url: %s", base64.StdEncoding.EncodeToString([]byte("postgres-"+g.pw())))
	return ss
}

// gen makes the characters of fake secrets, unique to its tag.
type gen struct {
	tag string
	n   int // passwords made so far
}

// pw is a password, another on each call.
func (g *gen) pw() string {
	g.n++
	return fmt.Sprintf("pw%02d", g.n) + g.alnum(12)
}

func (g *gen) repeat(unit string, n int) string { return strings.Repeat(unit, n/len(unit)+1)[:n] }

// alnum is letters and digits, upper and lower case, holding the tag.
func (g *gen) alnum(n int) string { return g.repeat("Mk"+g.tag+"Zq9", n) }

// upper is upper-case letters and digits.
func (g *gen) upper(n int) string { return g.repeat("MK"+strings.ToUpper(g.tag)+"ZQ9", n) }

// hex is lower-case hex digits.
func (g *gen) hex(n int) string { return g.repeat(fmt.Sprintf("fa4e%x", g.tag), n) }
