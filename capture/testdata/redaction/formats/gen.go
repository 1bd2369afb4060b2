//go:build ignore

// gen writes the redaction format corpus in this directory:
// secrets.jsonl (texts holding one or more secrets, each case naming the
// exact substrings that must disappear) and lookalikes.jsonl (texts that
// must come back unchanged). Every value is fake: random characters in
// the shape that provider's public documentation, and the public names of
// gitleaks' and trufflehog's rule classes, describe; the contexts are the
// places such values turn up in a coding agent's work (shell, .env,
// YAML, JSON, code, CLI flags, URLs, HTTP headers, logs, prose). The
// seed is fixed, so running it again writes the same files:
//
//	cd capture/testdata/redaction/formats && go run gen.go
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

type secretCase struct {
	ID      string   `json:"id"`
	Class   string   `json:"class"`
	Text    string   `json:"text"`
	Secrets []string `json:"secrets"`
}

type lookCase struct {
	ID    string `json:"id"`
	Class string `json:"class"`
	Text  string `json:"text"`
}

var r = rand.New(rand.NewPCG(2026, 1127))

const (
	upperSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerSet = "abcdefghijklmnopqrstuvwxyz"
	digitSet = "0123456789"
	alnumSet = upperSet + lowerSet + digitSet
	hexSet   = "0123456789abcdef"
	b64Set   = alnumSet + "+/"
	b64uSet  = alnumSet + "-_"
	b32Set   = upperSet + "234567"
)

func from(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

func alnum(n int) string { return from(alnumSet, n) }
func hex(n int) string   { return from(hexSet, n) }
func b64u(n int) string  { return from(b64uSet, n) }
func digits(n int) string {
	return from("123456789", 1) + from(digitSet, n-1)
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

func b64std(n int) string { return base64.StdEncoding.EncodeToString(randBytes(n)) }

func uuid() string {
	h := hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[r.IntN(4)]) + h[17:20] + "-" + h[20:]
}

func pick[T any](xs ...T) T { return xs[r.IntN(len(xs))] }

// password returns a password of one of the shapes people and
// generators give them.
func password() string {
	switch r.IntN(6) {
	case 0:
		return alnum(12 + r.IntN(20))
	case 1:
		return pick("Summer", "Winter", "Autumn", "Spring", "Dragon", "Monkey", "Shadow", "Falcon") + digits(4) + pick("!", "#", "$", "?", "*")
	case 2:
		return from(alnumSet+"!@#$%^&*()-_=+", 14+r.IntN(12))
	case 3:
		w := []string{"correct", "horse", "battery", "staple", "orbit", "maple", "violet", "quartz", "tundra", "pepper", "canyon", "lantern"}
		return pick(w...) + "-" + pick(w...) + "-" + pick(w...) + "-" + digits(2)
	case 4:
		return "P" + pick("@", "a") + "ss" + pick("w0rd", "word", "W0rd") + digits(3) + pick("!", "$", "")
	default:
		return from(lowerSet+digitSet, 8) + from(upperSet, 2) + from("!#%&", 1) + from(digitSet, 3)
	}
}

// urlPassword is a password a URL can hold as it is.
func urlPassword() string {
	switch r.IntN(3) {
	case 0:
		return alnum(16 + r.IntN(16))
	case 1:
		return pick("Summer", "Winter", "Dragon", "Falcon") + digits(4) + pick("%21", "%40", "%23")
	default:
		return from(alnumSet+"-_.~", 20)
	}
}

func envLine(name, val string) string {
	switch r.IntN(20) {
	case 0:
		return "export " + name + "=" + val
	case 1:
		return name + "=" + val
	case 2:
		return name + "=\"" + val + "\""
	case 3:
		return name + "='" + val + "'"
	case 4:
		return "  " + name + ": " + val
	case 5:
		return "  " + name + ": \"" + val + "\""
	case 6:
		return "      - " + name + "=" + val
	case 7:
		return "docker run --rm -e " + name + "=" + val + " ghcr.io/acme/worker:2.3.1"
	case 8:
		return "\"" + name + "\": \"" + val + "\","
	case 9:
		return "ENV " + name + "=" + val
	case 10:
		return name + "=" + val + " npm run deploy"
	case 11:
		return "heroku config:set " + name + "=" + val + " -a shop-prod"
	case 12:
		return "fly secrets set " + name + "=" + val
	case 13:
		return "kubectl create secret generic app-env --from-literal=" + name + "=" + val
	case 14:
		return "echo \"" + name + "=" + val + "\" >> .env.production"
	case 15:
		return "os.environ[\"" + name + "\"] = \"" + val + "\""
	case 16:
		return "process.env." + name + " = '" + val + "';"
	case 17:
		return "+ export " + name + "=" + val
	case 18:
		return "$env:" + name + " = \"" + val + "\""
	default:
		return "set " + name + "=" + val
	}
}

func prose(label, val string) string {
	switch r.IntN(8) {
	case 0:
		return "here is the " + label + ": " + val
	case 1:
		return "The " + label + " is " + val + " - rotate it after the demo."
	case 2:
		return "I pasted the " + label + " " + val + " into the CI settings"
	case 3:
		return "use " + val + " as the " + label + " for staging"
	case 4:
		return "new " + label + " " + val + " (expires in 30 days)"
	case 5:
		return "Found a hard-coded " + label + " in src/config.ts: " + val
	case 6:
		return "> " + label + ": " + val
	default:
		return "Can you check why " + val + " gets a 401? It's the " + label + " from the dashboard."
	}
}

func code(val string) string {
	switch r.IntN(7) {
	case 0:
		return "client = Client(\"" + val + "\")"
	case 1:
		return "const api = new ApiClient('" + val + "');"
	case 2:
		return "c := sdk.New(\"" + val + "\", sdk.WithRetry(3))"
	case 3:
		return "let conn = Connection::open(\"" + val + "\")?;"
	case 4:
		return "    auth=(\"" + val + "\", \"\"),"
	case 5:
		return "$client = new \\Acme\\Client('" + val + "');"
	default:
		return "new HttpClient(\"" + val + "\").get(\"/v1/me\")"
	}
}

type provider struct {
	class, env, label string
	n                 int
	val               func() string
	// extra are contexts of this provider's own (a %s for the value).
	extra []string
	// part, when set, is the part of the value that is the secret.
	part func(v string) string
}

var secrets []secretCase
var looks []lookCase
var counts = map[string]int{}

func id(prefix, class string) string {
	counts[prefix+class]++
	return fmt.Sprintf("%s-%s-%02d", prefix, class, counts[prefix+class])
}

func addS(class, text string, secret ...string) {
	for _, s := range secret {
		if !strings.Contains(text, s) {
			panic(fmt.Sprintf("%s: %q not in %q", class, s, text))
		}
	}
	secrets = append(secrets, secretCase{ID: id("s", class), Class: class, Text: text, Secrets: secret})
}

func addL(class string, texts ...string) {
	for _, t := range texts {
		looks = append(looks, lookCase{ID: id("l", class), Class: class, Text: t})
	}
}

func providers() []provider {
	return []provider{
		{"aws-access-key-id", "AWS_ACCESS_KEY_ID", "access key id", 6, func() string { return pick("AKIA", "ASIA") + from(b32Set, 16) },
			[]string{`{"AccessKeyId": "%s", "Expiration": "2026-12-01T03:00:00Z"}`, "aws_access_key_id = %s", "Using credentials %s for s3://acme-logs"}, nil},
		{"aws-secret-access-key", "AWS_SECRET_ACCESS_KEY", "AWS secret", 6, func() string { return from(b64Set, 40) },
			[]string{"aws_secret_access_key = %s", `    "SecretAccessKey": "%s",`, "aws configure set aws_secret_access_key %s --profile prod"}, nil},
		{"aws-session-token", "AWS_SESSION_TOKEN", "session token", 3, func() string { return "IQoJb3JpZ2luX2Vj" + from(b64Set, 340) + "=" },
			[]string{`    "SessionToken": "%s",`, "aws_session_token = %s"}, nil},
		{"gcp-api-key", "GOOGLE_API_KEY", "API key", 5, func() string { return "AIza" + b64u(35) },
			[]string{"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=%s", `  apiKey: "%s",`, "GEMINI_API_KEY=%s"}, nil},
		{"gcp-oauth-client-secret", "GOOGLE_CLIENT_SECRET", "client secret", 3, func() string { return "GOCSPX-" + b64u(28) },
			[]string{`{"installed":{"client_id":"8123-abc.apps.googleusercontent.com","client_secret":"%s"}}`}, nil},
		{"google-access-token", "GOOGLE_OAUTH_ACCESS_TOKEN", "access token", 3, func() string { return "ya29.a0" + b64u(150) },
			[]string{"Authorization: Bearer %s", `{"access_token": "%s", "expires_in": 3599, "token_type": "Bearer"}`}, nil},
		{"google-refresh-token", "GOOGLE_REFRESH_TOKEN", "refresh token", 2, func() string { return "1//0" + from(lowerSet, 1) + b64u(98) },
			[]string{`  "refresh_token": "%s",`}, nil},
		{"azure-storage-key", "AZURE_STORAGE_KEY", "storage key", 4, func() string { return b64std(64) },
			[]string{"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=%s;EndpointSuffix=core.windows.net",
				"az storage blob list --account-name acmelogs --account-key %s -c logs"}, nil},
		{"azure-sas", "", "", 3, func() string {
			s := b64std(32)
			return strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(s)
		}, []string{"https://acmelogs.blob.core.windows.net/logs/app.log?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-01T00:00:00Z&spr=https&sig=%s",
			`azcopy copy ./dist "https://acmeweb.blob.core.windows.net/$web?sv=2022-11-02&ss=b&srt=co&sp=rwl&se=2026-12-31&sig=%s" --recursive`}, nil},
		{"azure-servicebus-key", "", "", 2, func() string { return b64std(32) },
			[]string{"Endpoint=sb://acme-orders.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=%s"}, nil},
		{"azure-ad-client-secret", "AZURE_CLIENT_SECRET", "client secret", 4, func() string {
			return from(alnumSet, 3) + from(digitSet, 1) + "Q~" + from(alnumSet+"_~.-", 34)
		}, []string{"az login --service-principal -u 3f1a7c2e-9b4d-4e8f-a1c3-5d7e9f0b2a4c -p %s --tenant 8c2d4e6f-1a3b-4c5d-9e7f-0a1b2c3d4e5f", `  "clientSecret": "%s",`}, nil},
		{"azure-devops-pat", "AZURE_DEVOPS_EXT_PAT", "PAT", 2, func() string { return from(lowerSet+"234567", 52) },
			[]string{"git clone https://pat:%s@dev.azure.com/acme/shop/_git/api"}, nil},
		{"alibaba-access-key-id", "ALIBABA_CLOUD_ACCESS_KEY_ID", "access key", 3, func() string { return "LTAI" + alnum(20) }, nil, nil},
		{"alibaba-access-key-secret", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "", 2, func() string { return alnum(30) }, nil, nil},
		{"digitalocean-token", "DIGITALOCEAN_ACCESS_TOKEN", "DO token", 3, func() string { return "dop_v1_" + hex(64) },
			[]string{"doctl auth init --access-token %s"}, nil},
		{"vault-service-token", "VAULT_TOKEN", "vault token", 6, func() string { return "hvs.CAESI" + b64u(86) },
			[]string{"vault login %s", "curl -H \"X-Vault-Token: %s\" https://vault.internal:8200/v1/secret/data/app",
				"token                %s", "Success! You are now authenticated. The token information displayed below\ntoken                %s\ntoken_accessor       " + b64u(24)}, nil},
		{"vault-batch-token", "VAULT_TOKEN", "batch token", 2, func() string { return "hvb.AAAAAQ" + b64u(130) }, nil, nil},
		{"vault-legacy-token", "VAULT_TOKEN", "", 2, func() string { return "s." + alnum(24) }, []string{"vault login %s"}, nil},
		{"terraform-cloud-token", "TF_TOKEN_app_terraform_io", "Terraform Cloud token", 3, func() string { return alnum(14) + ".atlasv1." + alnum(67) },
			[]string{"credentials \"app.terraform.io\" {\n  token = \"%s\"\n}"}, nil},
		{"heroku-api-key", "HEROKU_API_KEY", "Heroku key", 2, func() string { return "HRKU-AA" + b64u(58) }, nil, nil},
		{"heroku-api-key-legacy", "HEROKU_API_KEY", "", 2, uuid, nil, nil},
		{"flyio-token", "FLY_API_TOKEN", "fly token", 2, func() string { return "FlyV1 fm2_lJPECAAAAAAAA" + b64std(150) },
			nil, func(v string) string { return strings.TrimPrefix(v, "FlyV1 ") }},
		{"cloudflare-token", "CLOUDFLARE_API_TOKEN", "Cloudflare token", 2, func() string { return "cfut_" + alnum(40) + alnum(8) }, nil, nil},
		{"cloudflare-token-legacy", "CLOUDFLARE_API_TOKEN", "", 2, func() string { return b64u(40) }, nil, nil},
		{"cloudflare-global-key", "CLOUDFLARE_API_KEY", "", 1, func() string { return hex(37) },
			[]string{"curl -H \"X-Auth-Email: ops@acme.io\" -H \"X-Auth-Key: %s\" https://api.cloudflare.com/client/v4/zones"}, nil},
		{"cloudflare-origin-ca-key", "CF_ORIGIN_CA_KEY", "", 1, func() string { return "v1.0-" + hex(24) + "-" + hex(146) }, nil, nil},
		{"databricks-token", "DATABRICKS_TOKEN", "Databricks token", 2, func() string { return "dapi" + hex(32) }, nil, nil},
		{"supabase-pat", "SUPABASE_ACCESS_TOKEN", "", 2, func() string { return "sbp_" + hex(40) }, nil, nil},
		{"planetscale-password", "", "PlanetScale password", 1, func() string { return "pscale_pw_" + b64u(43) },
			[]string{"mysql://k2j4h5g6f7d8:%s@aws.connect.psdb.cloud/shop?sslaccept=strict"}, nil},
		{"planetscale-token", "PLANETSCALE_SERVICE_TOKEN", "", 1, func() string { return "pscale_tkn_" + b64u(43) }, nil, nil},
		{"netlify-token", "NETLIFY_AUTH_TOKEN", "Netlify token", 2, func() string { return "nfp_" + alnum(36) }, nil, nil},
		{"render-key", "RENDER_API_KEY", "", 1, func() string { return "rnd_" + alnum(32) }, nil, nil},
		{"dockerhub-pat", "DOCKERHUB_TOKEN", "Docker Hub token", 3, func() string { return "dckr_pat_" + b64u(27) },
			[]string{"echo %s | docker login -u acme --password-stdin", "docker login -u acme -p %s"}, nil},
		{"npm-token", "NPM_TOKEN", "npm token", 3, func() string { return "npm_" + alnum(36) },
			[]string{"//registry.npmjs.org/:_authToken=%s"}, nil},
		{"pypi-token", "TWINE_PASSWORD", "PyPI token", 2, func() string { return "pypi-AgEIcHlwaS5vcmc" + b64u(70) },
			[]string{"twine upload -u __token__ -p %s dist/*", "[pypi]\n  username = __token__\n  password = %s"}, nil},
		{"rubygems-key", "GEM_HOST_API_KEY", "", 2, func() string { return "rubygems_" + hex(48) },
			[]string{"---\n:rubygems_api_key: %s"}, nil},
		{"nuget-key", "NUGET_API_KEY", "", 2, func() string { return "oy2" + from(lowerSet+digitSet, 43) },
			[]string{"dotnet nuget push bin/Release/Acme.Core.1.4.0.nupkg --api-key %s --source https://api.nuget.org/v3/index.json"}, nil},
		{"github-pat", "GITHUB_TOKEN", "GitHub token", 2, func() string { return "ghp_" + alnum(36) },
			[]string{"git clone https://%s@github.com/acme/api.git", "Authorization: token %s"}, nil},
		{"github-oauth", "GH_TOKEN", "", 1, func() string { return "gho_" + alnum(36) }, []string{"github.com:\n    oauth_token: %s\n    user: dev"}, nil},
		{"github-app-token", "", "installation token", 1, func() string { return "ghs_" + alnum(36) }, nil, nil},
		{"github-refresh-token", "", "refresh token", 1, func() string { return "ghr_" + alnum(76) }, nil, nil},
		{"github-fine-grained-pat", "GITHUB_PAT", "fine-grained token", 2, func() string { return "github_pat_" + alnum(22) + "_" + alnum(59) },
			[]string{"gh auth login --with-token <<< %s"}, nil},
		{"gitlab-pat", "GITLAB_TOKEN", "GitLab token", 2, func() string { return "glpat-" + b64u(20) },
			[]string{"git clone https://oauth2:%s@gitlab.com/acme/api.git", `curl --header "PRIVATE-TOKEN: %s" https://gitlab.com/api/v4/projects`}, nil},
		{"gitlab-deploy-token", "", "deploy token", 1, func() string { return "gldt-" + b64u(20) },
			[]string{"docker login registry.gitlab.com -u gitlab+deploy-token-42 -p %s"}, nil},
		{"gitlab-runner-token", "", "runner token", 1, func() string { return "glrt-" + b64u(20) },
			[]string{"gitlab-runner register --non-interactive --url https://gitlab.com --token %s"}, nil},
		{"gitlab-trigger-token", "", "trigger token", 1, func() string { return "glptt-" + hex(40) },
			[]string{"curl -X POST --fail -F token=%s -F ref=main https://gitlab.com/api/v4/projects/42/trigger/pipeline"}, nil},
		{"gitlab-runner-registration", "REGISTRATION_TOKEN", "", 1, func() string { return "GR1348941" + b64u(20) }, nil, nil},
		{"gitlab-feed-token", "", "feed token", 1, func() string { return "glft-" + b64u(20) },
			[]string{"https://gitlab.com/dashboard/issues.atom?feed_token=%s&state=opened"}, nil},
		{"bitbucket-app-password", "BITBUCKET_APP_PASSWORD", "app password", 2, func() string { return "ATBB" + alnum(32) }, nil, nil},
		{"atlassian-api-token", "JIRA_API_TOKEN", "Jira token", 2, func() string { return "ATATT3xFfGF0" + b64u(170) + "=" + strings.ToUpper(hex(8)) },
			[]string{"curl -u me@acme.io:%s https://acme.atlassian.net/rest/api/3/myself"}, nil},
		{"slack-bot-token", "SLACK_BOT_TOKEN", "Slack bot token", 2, func() string { return "xoxb-" + digits(11) + "-" + digits(13) + "-" + alnum(24) }, nil, nil},
		{"slack-user-token", "SLACK_TOKEN", "", 1, func() string { return "xoxp-" + digits(11) + "-" + digits(11) + "-" + digits(13) + "-" + hex(32) }, nil, nil},
		{"slack-app-token", "SLACK_APP_TOKEN", "", 1, func() string { return "xapp-1-A" + from(upperSet+digitSet, 10) + "-" + digits(13) + "-" + hex(64) }, nil, nil},
		{"slack-config-token", "", "config token", 1, func() string { return "xoxe.xoxp-1-" + b64u(150) }, nil, nil},
		{"slack-webhook", "SLACK_WEBHOOK_URL", "webhook", 2, func() string {
			return "https://hooks.slack.com/services/T" + from(upperSet+digitSet, 8) + "/B" + from(upperSet+digitSet, 10) + "/" + alnum(24)
		}, []string{`curl -X POST -H 'Content-type: application/json' --data '{"text":"deployed"}' %s`}, nil},
		{"discord-bot-token", "DISCORD_TOKEN", "bot token", 2, func() string { return pick("M", "N") + alnum(25) + "." + b64u(6) + "." + b64u(38) },
			[]string{"client.login('%s');", "Authorization: Bot %s"}, nil},
		{"discord-webhook", "", "", 2, func() string { return "https://discord.com/api/webhooks/" + digits(19) + "/" + b64u(68) },
			[]string{"curl -H 'Content-Type: application/json' -d '{\"content\":\"build green\"}' %s"},
			func(v string) string { return v[strings.LastIndex(v, "/")+1:] }},
		{"telegram-bot-token", "TELEGRAM_BOT_TOKEN", "bot token", 3, func() string { return digits(10) + ":AA" + b64u(33) },
			[]string{"curl https://api.telegram.org/bot%s/sendMessage -d chat_id=-1001234567890 -d text=hi"}, nil},
		{"teams-webhook", "", "", 1, func() string {
			return "https://acme.webhook.office.com/webhookb2/" + uuid() + "@" + uuid() + "/IncomingWebhook/" + hex(32) + "/" + uuid()
		}, []string{"TEAMS_WEBHOOK=%s"}, func(v string) string { return strings.Split(v, "/")[6] }},
		{"twilio-api-key", "TWILIO_API_KEY", "", 1, func() string { return "SK" + hex(32) }, nil, nil},
		{"twilio-auth-token", "TWILIO_AUTH_TOKEN", "", 2, func() string { return hex(32) }, nil, nil},
		{"sendgrid-key", "SENDGRID_API_KEY", "SendGrid key", 2, func() string { return "SG." + b64u(22) + "." + b64u(43) }, nil, nil},
		{"mailgun-key", "MAILGUN_API_KEY", "", 1, func() string { return "key-" + hex(32) },
			[]string{"curl -s --user 'api:%s' https://api.mailgun.net/v3/mg.acme.io/messages"}, nil},
		{"mailgun-key-v2", "MAILGUN_API_KEY", "", 1, func() string { return hex(32) + "-" + hex(8) + "-" + hex(8) }, nil, nil},
		{"mailchimp-key", "MAILCHIMP_API_KEY", "Mailchimp key", 2, func() string { return hex(32) + "-us" + digits(2) }, nil, nil},
		{"postmark-token", "POSTMARK_SERVER_TOKEN", "", 2, uuid, []string{"X-Postmark-Server-Token: %s"}, nil},
		{"stripe-secret-key", "STRIPE_SECRET_KEY", "Stripe key", 2, func() string { return "sk_live_51" + alnum(97) },
			[]string{"const stripe = require('stripe')('%s');", "curl https://api.stripe.com/v1/charges -u %s:"}, nil},
		{"stripe-restricted-key", "STRIPE_API_KEY", "", 1, func() string { return "rk_live_51" + alnum(97) }, nil, nil},
		{"stripe-test-key", "STRIPE_SECRET_KEY", "", 1, func() string { return "sk_test_51" + alnum(97) }, nil, nil},
		{"stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET", "signing secret", 2, func() string { return "whsec_" + alnum(32) }, nil, nil},
		{"square-access-token", "SQUARE_ACCESS_TOKEN", "", 1, func() string { return "EAAA" + b64u(60) }, nil, nil},
		{"square-oauth-secret", "SQUARE_APPLICATION_SECRET", "", 1, func() string { return "sq0csp-" + b64u(43) }, nil, nil},
		{"braintree-token", "BRAINTREE_ACCESS_TOKEN", "", 1, func() string { return "access_token$production$" + from(lowerSet+digitSet, 16) + "$" + hex(32) }, nil, nil},
		{"shopify-token", "SHOPIFY_ACCESS_TOKEN", "", 1, func() string { return "shpat_" + hex(32) },
			[]string{"curl -H \"X-Shopify-Access-Token: %s\" https://acme.myshopify.com/admin/api/2024-10/shop.json"}, nil},
		{"shopify-shared-secret", "SHOPIFY_API_SECRET", "", 1, func() string { return "shpss_" + hex(32) }, nil, nil},
		{"openai-key", "OPENAI_API_KEY", "OpenAI key", 2, func() string { return "sk-proj-" + b64u(74) + "T3BlbkFJ" + b64u(74) },
			[]string{`client = OpenAI(api_key="%s")`}, nil},
		{"openai-key-legacy", "OPENAI_API_KEY", "", 1, func() string { return "sk-" + alnum(20) + "T3BlbkFJ" + alnum(20) }, nil, nil},
		{"openai-service-account", "OPENAI_API_KEY", "", 1, func() string { return "sk-svcacct-" + b64u(74) + "T3BlbkFJ" + b64u(74) }, nil, nil},
		{"anthropic-key", "ANTHROPIC_API_KEY", "Anthropic key", 3, func() string { return "sk-ant-api03-" + b64u(93) + "AA" },
			[]string{`curl https://api.anthropic.com/v1/messages -H "x-api-key: %s" -H "anthropic-version: 2023-06-01"`, "client = anthropic.Anthropic(api_key=\"%s\")"}, nil},
		{"anthropic-admin-key", "ANTHROPIC_ADMIN_KEY", "", 1, func() string { return "sk-ant-admin01-" + b64u(93) + "AA" }, nil, nil},
		{"anthropic-oauth-token", "CLAUDE_CODE_OAUTH_TOKEN", "OAuth token", 1, func() string { return "sk-ant-oat01-" + b64u(93) + "AA" }, nil, nil},
		{"huggingface-token", "HF_TOKEN", "Hugging Face token", 2, func() string { return "hf_" + alnum(34) },
			[]string{"huggingface-cli login --token %s"}, nil},
		{"huggingface-org-token", "HUGGINGFACE_API_KEY", "", 1, func() string { return "api_org_" + alnum(34) }, nil, nil},
		{"groq-key", "GROQ_API_KEY", "Groq key", 2, func() string { return "gsk_" + alnum(52) }, nil, nil},
		{"replicate-token", "REPLICATE_API_TOKEN", "", 1, func() string { return "r8_" + alnum(37) }, nil, nil},
		{"perplexity-key", "PERPLEXITY_API_KEY", "", 1, func() string { return "pplx-" + alnum(48) }, nil, nil},
		{"xai-key", "XAI_API_KEY", "", 1, func() string { return "xai-" + alnum(80) }, nil, nil},
		{"cohere-key", "COHERE_API_KEY", "", 1, func() string { return alnum(40) }, nil, nil},
		{"mistral-key", "MISTRAL_API_KEY", "", 1, func() string { return alnum(32) }, nil, nil},
		{"deepseek-key", "DEEPSEEK_API_KEY", "", 1, func() string { return "sk-" + hex(32) },
			[]string{`client = OpenAI(api_key="%s", base_url="https://api.deepseek.com")`}, nil},
		{"sentry-org-token", "SENTRY_AUTH_TOKEN", "", 1, func() string { return "sntrys_eyJpYXQiOjE3" + alnum(120) + "_" + alnum(43) }, nil, nil},
		{"sentry-user-token", "SENTRY_AUTH_TOKEN", "", 1, func() string { return "sntryu_" + hex(64) }, nil, nil},
		{"newrelic-user-key", "NEW_RELIC_API_KEY", "", 2, func() string { return "NRAK-" + from(upperSet+digitSet, 27) }, nil, nil},
		{"newrelic-license-key", "NEW_RELIC_LICENSE_KEY", "", 1, func() string { return hex(36) + "NRAL" }, nil, nil},
		{"datadog-api-key", "DD_API_KEY", "", 2, func() string { return hex(32) }, []string{"curl -X POST https://api.datadoghq.com/api/v2/series -H \"DD-API-KEY: %s\""}, nil},
		{"datadog-app-key", "DD_APP_KEY", "", 1, func() string { return hex(40) }, nil, nil},
		{"grafana-service-account", "GRAFANA_TOKEN", "", 1, func() string { return "glsa_" + alnum(32) + "_" + hex(8) }, nil, nil},
		{"grafana-cloud-token", "GRAFANA_CLOUD_TOKEN", "", 1, func() string { return "glc_" + b64std(75) }, nil, nil},
		{"linear-key", "LINEAR_API_KEY", "Linear key", 2, func() string { return "lin_api_" + alnum(40) }, nil, nil},
		{"notion-token", "NOTION_TOKEN", "", 1, func() string { return "secret_" + alnum(43) }, nil, nil},
		{"notion-token-v2", "NOTION_API_KEY", "", 1, func() string { return "ntn_" + digits(11) + alnum(35) }, nil, nil},
		{"airtable-pat", "AIRTABLE_TOKEN", "Airtable token", 2, func() string { return "pat" + alnum(14) + "." + hex(64) }, nil, nil},
		{"postman-key", "POSTMAN_API_KEY", "", 2, func() string { return "PMAK-" + hex(24) + "-" + hex(34) },
			[]string{"newman run collection.json --postman-api-key %s"}, nil},
		{"pulumi-token", "PULUMI_ACCESS_TOKEN", "", 1, func() string { return "pul-" + hex(40) }, nil, nil},
		{"doppler-service-token", "DOPPLER_TOKEN", "", 1, func() string { return "dp.st.prd." + alnum(43) }, nil, nil},
		{"doppler-personal-token", "DOPPLER_TOKEN", "", 1, func() string { return "dp.pt." + alnum(43) }, nil, nil},
		{"onepassword-service-account", "OP_SERVICE_ACCOUNT_TOKEN", "", 1, func() string { return "ops_eyJzaWduSW5BZGRyZXNzIjoi" + b64std(220) }, nil, nil},
		{"age-secret-key", "SOPS_AGE_KEY", "age key", 2, func() string { return "AGE-SECRET-KEY-1" + from("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58) },
			[]string{"# created: 2026-11-20T10:12:44Z\n# public key: age1" + from("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58) + "\n%s"}, nil},
		{"okta-token", "OKTA_API_TOKEN", "", 2, func() string { return "00" + b64u(40) }, []string{"Authorization: SSWS %s"}, nil},
		{"jfrog-api-key", "ARTIFACTORY_API_KEY", "", 1, func() string { return "AKCp" + alnum(69) }, nil, nil},
		{"jfrog-reference-token", "JFROG_ACCESS_TOKEN", "", 1, func() string { return "cmVmdGtuOjAxOjE3" + alnum(48) }, nil, nil},
		{"contentful-token", "CONTENTFUL_MANAGEMENT_TOKEN", "", 1, func() string { return "CFPAT-" + b64u(43) }, nil, nil},
		{"dynatrace-token", "DT_API_TOKEN", "", 1, func() string { return "dt0c01." + from(upperSet+digitSet, 24) + "." + from(upperSet+digitSet, 64) }, nil, nil},
		{"easypost-key", "EASYPOST_API_KEY", "", 1, func() string { return "EZAK" + alnum(54) }, nil, nil},
		{"flutterwave-key", "FLW_SECRET_KEY", "", 1, func() string { return "FLWSECK-" + hex(32) + "-X" }, nil, nil},
		{"shippo-token", "SHIPPO_API_TOKEN", "", 1, func() string { return "shippo_live_" + hex(40) }, nil, nil},
		{"typeform-token", "TYPEFORM_TOKEN", "", 1, func() string { return "tfp_" + alnum(44) + "_" + alnum(14) }, nil, nil},
		{"sonar-token", "SONAR_TOKEN", "", 1, func() string { return "squ_" + hex(40) }, []string{"mvn verify sonar:sonar -Dsonar.token=%s"}, nil},
		{"snyk-token", "SNYK_TOKEN", "", 1, uuid, nil, nil},
		{"mapbox-secret-token", "MAPBOX_DOWNLOADS_TOKEN", "", 1, func() string { return "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + b64u(30) + "." + b64u(22) }, nil, nil},
		{"facebook-token", "FB_ACCESS_TOKEN", "", 1, func() string { return "EAAG" + alnum(180) }, nil, nil},
		{"twitter-bearer", "TWITTER_BEARER_TOKEN", "", 1, func() string { return "AAAAAAAAAAAAAAAAAAAAA" + alnum(20) + "%3D" + alnum(50) }, nil, nil},
		{"fcm-server-key", "FCM_SERVER_KEY", "", 1, func() string { return "AAAA" + b64u(7) + ":APA91b" + b64u(134) },
			[]string{`curl -H "Authorization: key=%s" -H "Content-Type: application/json" https://fcm.googleapis.com/fcm/send`}, nil},
		{"adafruit-key", "ADAFRUIT_IO_KEY", "", 1, func() string { return "aio_" + alnum(28) }, nil, nil},
		{"prefect-key", "PREFECT_API_KEY", "", 1, func() string { return "pnu_" + alnum(36) }, nil, nil},
		{"readme-key", "README_API_KEY", "", 1, func() string { return "rdme_" + alnum(70) }, nil, nil},
		{"clojars-token", "CLOJARS_PASSWORD", "", 1, func() string { return "CLOJARS_" + hex(60) }, nil, nil},
		{"launchdarkly-token", "LD_ACCESS_TOKEN", "", 1, func() string { return "api-" + uuid() }, nil, nil},
		{"launchdarkly-sdk-key", "LAUNCHDARKLY_SDK_KEY", "", 1, func() string { return "sdk-" + uuid() }, nil, nil},
		{"intercom-token", "INTERCOM_ACCESS_TOKEN", "", 1, func() string { return "dG9rOj" + b64std(40) }, nil, nil},
		{"buildkite-token", "BUILDKITE_API_TOKEN", "", 1, func() string { return "bkua_" + hex(40) }, nil, nil},
		{"algolia-admin-key", "ALGOLIA_ADMIN_API_KEY", "", 1, func() string { return hex(32) }, nil, nil},
		{"zendesk-token", "ZENDESK_API_TOKEN", "", 1, func() string { return alnum(40) }, nil, nil},
		{"hubspot-token", "HUBSPOT_ACCESS_TOKEN", "", 1, func() string { return "pat-na1-" + uuid() }, nil, nil},
		{"asana-pat", "ASANA_PAT", "", 1, func() string { return "2/" + digits(16) + "/" + digits(16) + ":" + hex(32) }, nil, nil},
		{"codecov-token", "CODECOV_TOKEN", "", 1, uuid, nil, nil},
		{"circleci-token", "CIRCLECI_TOKEN", "", 1, func() string { return "CCIPAT_" + alnum(22) + "_" + hex(40) }, nil, nil},
		{"sidekiq-credentials", "BUNDLE_GEMS__CONTRIBSYS__COM", "", 1, func() string { return hex(8) + ":" + hex(8) }, nil, nil},
		{"ethereum-private-key", "DEPLOYER_PRIVATE_KEY", "", 2, func() string { return "0x" + hex(64) }, nil, nil},
	}
}

func providerCases() {
	for _, p := range providers() {
		for i := 0; i < p.n; i++ {
			v := p.val()
			secret := v
			if p.part != nil {
				secret = p.part(v)
			}
			var ctxs []func() string
			if p.env != "" {
				ctxs = append(ctxs, func() string { return envLine(p.env, v) }, func() string { return envLine(p.env, v) })
			}
			if p.label != "" {
				ctxs = append(ctxs, func() string { return prose(p.label, v) })
			}
			for _, e := range p.extra {
				ctxs = append(ctxs, func() string { return strings.ReplaceAll(e, "%s", v) })
			}
			if len(ctxs) == 0 {
				ctxs = append(ctxs, func() string { return code(v) })
			}
			// Rotate through the contexts so each is used.
			text := ctxs[(i+r.IntN(2))%len(ctxs)]()
			addS(p.class, text, secret)
		}
	}
}

func pemBody(first string, lines int) string {
	var b strings.Builder
	body := first + from(b64Set, 64*lines-len(first)-r.IntN(40))
	for i := 0; i < len(body); i += 64 {
		b.WriteString(body[i:min(i+64, len(body))])
		b.WriteString("\n")
	}
	return b.String()
}

func privateKeys() {
	types := []struct{ kind, first string }{
		{"RSA PRIVATE KEY", "MIIEowIBAAKCAQEA"},
		{"RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA"},
		{"EC PRIVATE KEY", "MHcCAQEEI"},
		{"OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"},
		{"OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD"},
		{"PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"},
		{"ENCRYPTED PRIVATE KEY", "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI"},
		{"DSA PRIVATE KEY", "MIIBuwIBAAKBgQ"},
	}
	for i, t := range types {
		lines := 4 + r.IntN(10)
		block := "-----BEGIN " + t.kind + "-----\n" + pemBody(t.first, lines) + "-----END " + t.kind + "-----"
		var text string
		switch i % 4 {
		case 0:
			text = "$ cat ~/.ssh/deploy_key\n" + block + "\n"
		case 1:
			text = block
		case 2:
			text = "  tls.key: |\n    " + strings.ReplaceAll(block, "\n", "\n    ")
			addS("private-key", text, strings.Split(block, "\n")[1:lines]...)
			continue
		default:
			text = "Here's the key I generated:\n\n```\n" + block + "\n```"
		}
		addS("private-key", text, block)
	}
	// PGP.
	pgp := "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGVx" + strings.TrimSuffix(pemBody("", 8), "\n") + "\n=" + alnum(4) + "\n-----END PGP PRIVATE KEY BLOCK-----"
	addS("private-key", "gpg --export-secret-keys --armor dev@acme.io\n"+pgp, pgp)
	// Inside a service account's JSON, with its newlines escaped.
	for range 2 {
		body := strings.ReplaceAll(pemBody("MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", 12), "\n", `\n`)
		key := `-----BEGIN PRIVATE KEY-----\n` + body + `-----END PRIVATE KEY-----\n`
		text := `{"type": "service_account", "project_id": "acme-prod", "private_key_id": "` + hex(40) + `", "private_key": "` + key + `", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}`
		addS("private-key-json", text, strings.TrimSuffix(key, `\n`))
	}
	// A key cut off by the output cap: no END line.
	body := pemBody("MIIJQgIBADANBgkqhkiG9w0BAQEFAASCCSwwggkoAgEAAoICAQ", 6)
	addS("private-key", "$ kubectl get secret tls -o jsonpath='{.data.tls\\.key}' | base64 -d\n-----BEGIN PRIVATE KEY-----\n"+body, strings.Split(body, "\n")[:5]...)
	// PuTTY's format.
	priv := pemBody("AAABAQC", 14)
	putty := "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy@build\nPublic-Lines: 6\n" + pemBody("AAAAB3NzaC1yc2EAAAADAQABAAABAQ", 6) + "Private-Lines: 14\n" + priv + "Private-MAC: " + hex(64)
	addS("private-key-putty", putty, strings.Split(strings.TrimSuffix(priv, "\n"), "\n")...)
	// A key in base64 (kubeconfig's client-key-data).
	pemText := "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody("MIIEowIBAAKCAQEA", 10) + "-----END RSA PRIVATE KEY-----\n"
	kd := base64.StdEncoding.EncodeToString([]byte(pemText))
	addS("kubeconfig-client-key", "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: "+kd, kd)
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func jwt() string {
	head := b64url(pick(`{"alg":"HS256","typ":"JWT"}`, `{"alg":"RS256","typ":"JWT","kid":"`+hex(16)+`"}`, `{"typ":"JWT","alg":"ES256"}`))
	claims := fmt.Sprintf(`{"sub":"%s","iat":%d,"exp":%d,"role":"%s"}`, pick(uuid(), "user_"+digits(6), "service-account"), 1732000000+r.IntN(9999999), 1733000000+r.IntN(9999999), pick("admin", "service_role", "authenticated"))
	return head + "." + b64url(claims) + "." + b64u(43+r.IntN(300)/100*43)
}

func jwts() {
	ctx := []string{
		"Authorization: Bearer %s",
		`curl -H "Authorization: Bearer %s" https://api.acme.io/v1/orders`,
		`{"id_token": "%s", "token_type": "Bearer"}`,
		"SUPABASE_SERVICE_ROLE_KEY=%s",
		"localStorage.setItem('session', '%s');",
		"Cookie: theme=dark; auth=%s",
		"kubectl --server https://10.0.0.1:6443 --token=%s get pods -A",
		"2026-11-20T09:14:03Z DEBUG sending request with token %s",
		"users:\n- name: ci\n  user:\n    token: %s",
		`export const TEST_TOKEN = "%s";`,
	}
	for _, c := range ctx {
		t := jwt()
		addS("jwt", strings.ReplaceAll(c, "%s", t), t)
	}
}

func connectionStrings() {
	type cs struct{ f string }
	forms := []string{
		"postgres://app:%s@db.internal:5432/orders",
		"DATABASE_URL=postgresql://orders_rw:%s@orders-db.cluster-c9x2k1.eu-west-1.rds.amazonaws.com:5432/orders?sslmode=require",
		"psql \"postgresql://postgres:%s@localhost:5433/shop\" -c 'select 1'",
		"mysql://root:%s@127.0.0.1:3306/shop",
		"mongodb+srv://admin:%s@cluster0.ab1cd.mongodb.net/?retryWrites=true&w=majority",
		"MONGO_URL=mongodb://app:%s@mongo-0.mongo:27017,mongo-1.mongo:27017/app?replicaSet=rs0&authSource=admin",
		"redis://default:%s@redis-12345.c1.us-east-1-2.ec2.cloud.redislabs.com:12345",
		"REDIS_URL=redis://:%s@cache.internal:6379/0",
		"rediss://:%s@master.acme-cache.abc123.use1.cache.amazonaws.com:6379",
		"amqp://orders:%s@rabbitmq:5672/prod",
		"CELERY_BROKER_URL=amqps://worker:%s@b-1234.mq.us-east-1.amazonaws.com:5671",
		"sqlserver://sa:%s@localhost:1433?database=shop&encrypt=disable",
		"jdbc:postgresql://db:5432/shop?user=app&password=%s&ssl=true",
		"spring.datasource.url=jdbc:mysql://db:3306/shop?user=root&password=%s&useSSL=false",
		"Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=shop;User ID=app;Password=%s;Encrypt=True;",
		"\"DefaultConnection\": \"Data Source=db;Initial Catalog=Shop;User Id=sa;Password=%s;TrustServerCertificate=True\"",
		"Driver={ODBC Driver 18 for SQL Server};Server=db;Database=shop;UID=app;PWD=%s;",
		"dsn = \"host=db port=5432 dbname=shop user=app password=%s sslmode=disable\"",
		"ftp://deploy:%s@ftp.acme.io/public_html",
		"lftp sftp://deploy:%s@files.acme.io",
		"smtp://postmaster@mg.acme.io:%s@smtp.mailgun.org:587",
		"NATS_URL=nats://app:%s@nats.internal:4222",
		"curl https://elastic:%s@es.internal:9200/_cluster/health",
		"clickhouse://default:%s@ch.internal:9000/default",
		"neo4j+s://neo4j:%s@a1b2c3d4.databases.neo4j.io",
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"orders\" password=\"%s\";",
		"proxy: http://svc-build:%s@proxy.corp.acme.io:3128",
		"git clone https://deploy-bot:%s@git.acme.io/platform/infra.git",
		"pip install --index-url https://__token__:%s@pypi.acme.io/simple acme-core",
		"https://admin:%s@jenkins.acme.io/job/deploy/build?delay=0sec",
	}
	for i, f := range forms {
		pw := urlPassword()
		if i >= 11 && i <= 17 || i == 25 {
			pw = password()
			if strings.ContainsAny(pw, ";\"") {
				pw = alnum(18)
			}
		}
		addS("connection-string", strings.ReplaceAll(f, "%s", pw), pw)
	}
}

func djangoKey() string {
	return from("abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)", 50)
}

func assignments() {
	names := []string{"DB_PASSWORD", "DATABASE_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "MYSQL_PASSWORD", "REDIS_PASSWORD",
		"SMTP_PASSWORD", "MAIL_PASSWORD", "EMAIL_HOST_PASSWORD", "ADMIN_PASSWORD", "RABBITMQ_DEFAULT_PASS", "MONGO_INITDB_ROOT_PASSWORD",
		"KEYCLOAK_ADMIN_PASSWORD", "GF_SECURITY_ADMIN_PASSWORD", "PGPASSWORD", "ELASTIC_PASSWORD", "MINIO_ROOT_PASSWORD",
		"SPRING_DATASOURCE_PASSWORD", "LDAP_BIND_PASSWORD", "SMTP_PASS", "DB_PASS", "REDIS_PASS"}
	for _, n := range names {
		pw := password()
		var text string
		if strings.ContainsAny(pw, "#$!&*()^ ") {
			text = pick(n+"=\""+pw+"\"", n+"='"+pw+"'", "  "+n+": \""+pw+"\"", "export "+n+"='"+pw+"'")
		} else {
			text = envLine(n, pw)
		}
		addS("password-assignment", text, pw)
	}
	// Django's key, from its own alphabet of 50 characters, and other
	// framework secrets with characters a regular expression stops at.
	for _, f := range []string{"SECRET_KEY = 'django-insecure-%s'", "SECRET_KEY = \"%s\"", "DJANGO_SECRET_KEY='%s'", "    SECRET_KEY='django-insecure-%s',", "SECRET_KEY=\"django-insecure-%s\""} {
		k := djangoKey()
		text := strings.ReplaceAll(f, "%s", k)
		addS("django-secret-key", text, k)
	}
	for range 2 {
		k := hex(128)
		addS("rails-secret-key-base", pick("secret_key_base: "+k, "SECRET_KEY_BASE="+k, "  secret_key_base: \""+k+"\""), k)
	}
	for range 2 {
		k := "base64:" + b64std(32)
		addS("laravel-app-key", pick("APP_KEY="+k, "APP_KEY=\""+k+"\""), strings.TrimPrefix(k, "base64:"))
	}
	special := "!@#$%^&*()-_=+[]{}<>?~"
	for _, f := range []string{
		"app.secret_key = '%s'",
		"app.config['SECRET_KEY'] = \"%s\"",
		"NEXTAUTH_SECRET=\"%s\"",
		"JWT_SECRET='%s'",
		"SESSION_SECRET=\"%s\"",
		"COOKIE_SECRET='%s'",
		"  password: \"%s\"",
		"\"password\": \"%s\",",
		"password = '%s'",
		"define('DB_PASSWORD', '%s');",
		"define( 'AUTH_KEY', '%s' );",
		"$config['encryption_key'] = '%s';",
		"  jwt_secret: '%s'",
		"WEBHOOK_SECRET=\"%s\"",
	} {
		v := from(alnumSet+special, 24+r.IntN(40))
		addS("quoted-special", strings.ReplaceAll(f, "%s", v), v)
	}
	// Variables named *_AUTH hold credentials.
	for _, f := range []struct{ t, secret string }{
		{"BASIC_AUTH=admin:%s", ""},
		{"HTTP_BASIC_AUTH=\"deploy:%s\"", ""},
		{"PROXY_AUTH=svc-build:%s", ""},
		{"KIBANA_AUTH='elastic:%s'", ""},
		{"GIT_AUTH=oauth2:%s", ""},
		{"export API_AUTH=%s", "t"},
		{"X_AUTH=%s", "t"},
		{"  REGISTRY_AUTH: %s", "b"},
		{"NPM_CONFIG__AUTH=%s", "b"},
		{"_auth=%s", "b"},
		{"UPSTASH_REDIS_REST_AUTH=\"%s\"", "t"},
		{"SMTP_AUTH=\"mailer:%s\"", ""},
	} {
		var v string
		switch f.secret {
		case "t":
			v = alnum(24 + r.IntN(20))
		case "b":
			v = base64.StdEncoding.EncodeToString([]byte("ci:" + password()))
		default:
			v = password()
			if strings.ContainsAny(v, "'\" ") {
				v = alnum(16)
			}
		}
		addS("auth-variable", strings.ReplaceAll(f.t, "%s", v), v)
	}
}

func configFiles() {
	for _, f := range []string{
		"spring:\n  datasource:\n    username: app\n    password: %s",
		"db:\n  host: db.internal\n  password: %s\n  pool: 10",
		"{\n  \"database\": {\n    \"user\": \"app\",\n    \"password\": \"%s\"\n  }\n}",
		"{\"apiKey\": \"%s\", \"region\": \"eu\"}",
		"  \"client_secret\": \"%s\",",
		"[auth]\ntoken = \"%s\"",
		"[client]\nuser = root\npassword = %s",
		"<password>%s</password>",
		"<add key=\"ApiKey\" value=\"%s\" />",
		"<add key=\"ClearTextPassword\" value=\"%s\" />",
		"spring.datasource.password=%s",
		"mail.smtp.password=%s",
		"$db_password = '%s';",
		"DATABASES = {'default': {'ENGINE': 'django.db.backends.postgresql', 'USER': 'app', 'PASSWORD': '%s'}}",
		"\tPassword: \"%s\",",
		"  password: '%s'",
		"String password = \"%s\";",
		"var apiKey = \"%s\";",
		"  password = \"%s\"",
		"ansible_become_password: %s",
		"  rootPassword: %s",
		"network={\n    ssid=\"acme-office\"\n    psk=\"%s\"\n}",
		"ossrhPassword=%s",
		"signing.password=%s",
		"secret_key = %s",
		"c.NotebookApp.token = '%s'",
		"auth_token: %s",
		"  api_secret: %s",
		"consumer_secret=%s",
		"client-secret: %s",
	} {
		var v string
		switch {
		case strings.Contains(f, "apiKey") || strings.Contains(f, "ApiKey") || strings.Contains(f, "token") || strings.Contains(f, "secret"):
			v = pick(alnum(32), hex(40), b64u(43))
		default:
			v = password()
			if strings.ContainsAny(v, "'\"<>&$ ") {
				v = alnum(14) + from("!#%", 1)
			}
		}
		addS("config-file", strings.ReplaceAll(f, "%s", v), v)
	}
}

func cliFlags() {
	for _, f := range []string{
		"mysql -u root -p%s shop < dump.sql",
		"mysql --user=root --password=%s -h db shop",
		"mysqldump -uroot -p%s --all-databases > all.sql",
		"PGPASSWORD=%s psql -h db -U app orders",
		"sshpass -p '%s' ssh deploy@10.0.3.17",
		"docker login -u acme -p %s registry.acme.io",
		"redis-cli -h cache.internal -a %s ping",
		"htpasswd -bc /etc/nginx/.htpasswd admin %s",
		"curl -u admin:%s https://jenkins.acme.io/api/json",
		"curl --user deploy:%s -X POST https://nexus.acme.io/service/rest/v1/components",
		"wget --user=ci --password=%s https://artifacts.acme.io/build.tar.gz",
		"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:%s",
		"openssl rsa -in server.key -out server.nopass.key -passin pass:%s",
		"keytool -importkeystore -srckeystore app.p12 -srcstorepass %s -destkeystore app.jks",
		"helm repo add acme https://charts.acme.io --username ci --password %s",
		"ansible-playbook site.yml -i prod --extra-vars \"ansible_password=%s\"",
		"az login -u ops@acme.io -p %s",
		"smbclient //fs01/share -U dev%%%s",
		"vault login -method=userpass username=dev password=%s",
		"influx setup --username admin --password %s --org acme --bucket metrics --force",
		"./deploy --api-key %s --env prod",
		"terraform apply -var db_password=%s",
		"mytool sync --token=%s",
		"cli --client-secret %s --client-id 4f2a",
		"rabbitmqctl add_user orders %s",
		"mongosh --username admin --password %s --authenticationDatabase admin",
		"psql -d \"host=db user=app password=%s dbname=orders\"",
	} {
		v := password()
		if strings.ContainsAny(v, "'\"$!&*()^#%;<> ") || strings.Contains(f, "-p%s") {
			v = alnum(10) + from(digitSet, 3) + from("-_.", 1) + alnum(3)
		}
		text := strings.ReplaceAll(strings.ReplaceAll(f, "%%", "%"), "%s", v)
		addS("cli-flag", text, v)
	}
}

func headers() {
	for _, f := range []string{
		"Authorization: Bearer %s",
		`-H "Authorization: Bearer %s"`,
		"authorization: Token %s",
		"X-API-Key: %s",
		"api-key: %s",
		"X-Auth-Token: %s",
		`headers = {"Authorization": "Bearer %s", "Accept": "application/json"}`,
		"> Authorization: Bearer %s",
		"Cookie: sessionid=%s; csrftoken=Xq3",
		"Set-Cookie: _gitlab_session=%s; path=/; HttpOnly",
		"x-access-token: %s",
		`fetch(url, { headers: { "X-Api-Token": "%s" } })`,
	} {
		v := pick(alnum(40), hex(32), b64u(48), from(lowerSet+digitSet, 32))
		addS("http-header", strings.ReplaceAll(f, "%s", v), v)
	}
	for range 3 {
		v := base64.StdEncoding.EncodeToString([]byte(pick("admin", "ci", "deploy") + ":" + password()))
		addS("basic-auth", pick("Authorization: Basic "+v, `curl -H "Authorization: Basic `+v+`" https://registry.acme.io/v2/_catalog`, "Proxy-Authorization: Basic "+v), v)
	}
}

func proseSecrets() {
	for _, f := range []string{
		"The signing secret for the webhook is %s, keep it out of git.",
		"my password is %s",
		"API key: %s",
		"here's the token %s - it only has read scope",
		"The admin password was reset to %s this morning.",
		"Secret: %s",
		"Use passphrase %s to unlock the keystore.",
		"token=%s in the query string leaked to the access log",
		"Login with user ci and password %s.",
		"new access token %s (valid 1h)",
		"The shared key is %s",
		"pwd: %s",
	} {
		v := pick(alnum(24), password(), hex(32), b64u(40))
		if strings.ContainsAny(v, " ") {
			v = alnum(20)
		}
		addS("prose", strings.ReplaceAll(f, "%s", v), v)
	}
}

func credentialFiles() {
	for range 3 {
		v := pick(uuid(), "ghp_"+alnum(36), password())
		addS("netrc", pick("machine api.heroku.com\n  login me@acme.io\n  password "+v, "machine github.com login dev password "+v), v)
	}
	for range 2 {
		v := password()
		if strings.ContainsAny(v, ": ") {
			v = alnum(16)
		}
		addS("pgpass", pick("db.internal:5432:orders:app:", "*:*:*:postgres:")+v, v)
	}
	for range 2 {
		v := base64.StdEncoding.EncodeToString([]byte("acme:" + alnum(20)))
		addS("docker-config", "{\n  \"auths\": {\n    \"registry.acme.io\": {\n      \"auth\": \""+v+"\"\n    }\n  }\n}", v)
	}
	for range 2 {
		v := pick("ghp_"+alnum(36), "glpat-"+b64u(20), alnum(20))
		addS("git-credentials", pick("https://dev:"+v+"@github.com", "https://oauth2:"+v+"@gitlab.com"), v)
	}
	for range 2 {
		id, key := "AKIA"+from(b32Set, 16), from(b64Set, 40)
		addS("aws-credentials-file", "[default]\naws_access_key_id = "+id+"\naws_secret_access_key = "+key+"\nregion = eu-west-1", id, key)
	}
	for range 3 {
		a := base64.StdEncoding.EncodeToString([]byte(password()))
		b := base64.StdEncoding.EncodeToString([]byte(alnum(32)))
		addS("kubernetes-secret", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  password: "+a+"\n  api-key: "+b, a, b)
	}
	v := password()
	if strings.ContainsAny(v, "'\" ") {
		v = alnum(18)
	}
	addS("k8s-string-data", "kind: Secret\nstringData:\n  DB_PASSWORD: \""+v+"\"", v)
	g := "gho_" + alnum(36)
	addS("composer-auth", `{"github-oauth": {"github.com": "`+g+`"}}`, g)
	it := b64u(120)
	addS("docker-config", `{"auths": {"acme.azurecr.io": {"identitytoken": "`+it+`"}}}`, it)
	tv := password()
	if strings.ContainsAny(tv, "\" ") {
		tv = alnum(20)
	}
	addS("tfvars", "db_password = \""+tv+"\"\nregion      = \"eu-west-1\"", tv)
	s3 := from(b64Set, 40)
	addS("s3cfg", "[default]\naccess_key = AKIA"+from(b32Set, 16)+"\nsecret_key = "+s3, s3)
}

func awsPairs() {
	forms := []string{
		"using %s and secret %s to upload",
		"access key %s, secret key %s",
		"Key ID: %s\nSecret: %s",
		"Access key ID,Secret access key\n%s,%s",
		"aws creds are %s / %s (the ci-deployer user)",
		"set them to %s and %s in the runner",
	}
	for _, f := range forms {
		id, key := "AKIA"+from(b32Set, 16), from(b64Set, 40)
		addS("aws-pair", fmt.Sprintf(f, id, key), id, key)
	}
}

func entropyNearWords() {
	for _, f := range []string{
		"MASTER_KEY=%s",
		"AES_KEY=%s",
		"CIPHER_KEY=\"%s\"",
		"HMAC_KEY=%s",
		"SHARED_KEY: %s",
		"SIGNING_KEY=%s",
		"ENCRYPTION_KEY=%s",
		"APP_SECRET=%s",
		"  hmac_secret: %s",
		"salt = \"%s\"",
		"PRIVATE_KEY=%s",
		"OTP_SECRET=%s",
	} {
		v := pick(hex(64), b64std(32), alnum(40), hex(32))
		addS("key-assignment", strings.ReplaceAll(f, "%s", v), v)
	}
	for range 2 {
		s := from(b32Set, 32)
		addS("totp-secret", "otpauth://totp/ACME:alice@acme.io?secret="+s+"&issuer=ACME", s)
	}
	w := []string{"abandon", "ability", "able", "about", "above", "absent", "absorb", "abstract", "absurd", "abuse", "access", "accident", "zoo", "wrist", "yellow", "unfold", "tiger", "spell"}
	var m []string
	for range 12 {
		m = append(m, pick(w...))
	}
	phrase := strings.Join(m, " ")
	addS("mnemonic", "MNEMONIC=\""+phrase+"\"", phrase)
}

// ---- look-alikes ----

var sentences = []string{
	"The quick brown fox jumps over the lazy dog",
	"Deploy finished without errors at noon",
	"hello world from the staging cluster",
	"Retry the job after the database migration completes",
	"user preferences: dark mode, compact layout",
	"Meeting notes for the checkout incident review",
	"This is a plain configuration file for the worker",
	"Order 4411 shipped to Berlin on Tuesday",
}

func gitLooks() {
	for range 3 {
		addL("git", "commit "+hex(40)+"\nAuthor: Dana Kim <dana@acme.io>\nDate:   Tue Nov 18 10:42:11 2026 +0100")
	}
	addL("git",
		"Merge: "+hex(7)+" "+hex(7),
		"HEAD is now at "+hex(7)+" fix(checkout): allow 5s of clock skew",
		"[main "+hex(7)+"] Add retry with backoff to the queue worker",
		"git cherry-pick "+hex(40),
		"git rebase -i "+hex(12)+"~3",
		"* "+hex(7)+" (HEAD -> main, origin/main) docs: explain the spool",
		"fatal: bad object "+hex(40),
		"index "+hex(7)+".."+hex(7)+" 100644",
		"Fixes: "+hex(12)+" (\"net: handle short reads\")",
		"Change-Id: I"+hex(40),
		"gpg: using RSA key "+strings.ToUpper(hex(40)),
		hex(7)+" "+hex(7)+" "+hex(7)+" three commits squashed",
		"remote: Resolving deltas: 100% (42/42), completed with 7 local objects.\nTo github.com:acme/api.git\n   "+hex(7)+".."+hex(7)+"  main -> main",
		"github.com/acme/api v0.0.0-20261118104211-"+hex(12),
		"Updating "+hex(7)+".."+hex(7)+"\nFast-forward",
		"  \"rev\": \""+hex(40)+"\",",
		"uses: actions/checkout@"+hex(40)+" # v4.2.2",
	)
}

func checksumLooks() {
	addL("checksum",
		hex(64)+"  cairn_1.4.0_linux_amd64.tar.gz",
		"sha256sum: "+hex(64)+"  node-v20.20.2-linux-x64.tar.xz",
		"MD5 (release.zip) = "+hex(32),
		"SHA1: "+hex(40),
		`"checksum": "sha256:`+hex(64)+`"`,
		`checksum = "`+hex(64)+`"`,
		"requests==2.32.3 --hash=sha256:"+hex(64),
		`"shasum": "`+hex(40)+`",`,
		"    rake (13.2.1) sha256="+hex(64),
		`<sha256 value="`+hex(64)+`" origin="Generated by Gradle"/>`,
		`ETag: "`+hex(32)+`"`,
		"x-amz-request-id: "+strings.ToUpper(hex(16)),
		"x-amz-id-2: "+b64std(57),
		"X-Amz-Cf-Id: "+b64u(40)+"==",
		"x-goog-hash: crc32c=n03x6A==, md5=Ojk9c3dhfxgoKVVHYwFbHQ==",
		"Content-MD5: "+b64std(16),
		"checksum mismatch: want "+hex(64)+", got "+hex(64),
		"Verifying "+hex(40)+" ... OK",
	)
}

func uuidLooks() {
	addL("uuid",
		"request id "+uuid()+" failed with 502",
		`{"id": "`+uuid()+`", "status": "queued"}`,
		"  uid: "+uuid(),
		`"lineage": "`+uuid()+`",`,
		"X-Request-ID: "+uuid(),
		"trace_id="+hex(32)+" span_id="+hex(16),
		"traceparent: 00-"+hex(32)+"-"+hex(16)+"-01",
		"AZURE_TENANT_ID="+uuid(),
		"AZURE_CLIENT_ID="+uuid(),
		"ARM_SUBSCRIPTION_ID="+uuid(),
		"Session "+uuid()+" started",
		"sentry event "+hex(32)+" captured",
		"INSERT INTO orders (id, customer_id) VALUES ('"+uuid()+"', '"+uuid()+"');",
		"correlationId: "+uuid(),
		"/api/v1/projects/"+uuid()+"/members",
		"idempotency_key = \""+uuid()+"\"",
	)
}

func idLooks() {
	addL("id",
		"obs_01J"+from("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 23)+" pinned as root cause",
		"ksuid "+alnum(27),
		"nanoid "+b64u(21),
		`ObjectId("`+hex(24)+`")`,
		"snowflake id "+digits(19),
		"customer cus_"+alnum(14)+" has 3 invoices",
		"payment_intent pi_3"+alnum(23)+" succeeded",
		"evt_1"+alnum(23)+" delivered to the endpoint",
		"channel C0"+from(upperSet+digitSet, 9)+" ts 1732100000.123456",
		"Account SID AC"+hex(32),
		"arn:aws:iam::"+digits(12)+":role/ci-deployer",
		"arn:aws:lambda:eu-west-1:"+digits(12)+":function:orders-"+hex(8),
		"i-0"+hex(16)+" stopped; sg-0"+hex(16)+" detached",
		"ami-0"+hex(16),
		"subnet-0"+hex(16)+", vpc-0"+hex(16),
		"CloudFront distribution E"+from(upperSet+digitSet, 13),
		"pod/api-"+hex(10)+"-"+from(lowerSet+digitSet, 5)+" Running",
		"CONTAINER ID   IMAGE\n"+hex(12)+"   postgres:16",
		"https://www.youtube.com/watch?v="+b64u(11),
		"https://docs.google.com/spreadsheets/d/1"+b64u(43)+"/edit#gid=0",
		"https://www.notion.so/acme/Roadmap-"+hex(32),
		"https://www.figma.com/file/"+alnum(22)+"/Checkout",
		"spotify:track:"+alnum(22),
		`"id": "gid://shopify/Product/`+digits(13)+`"`,
		`"node_id": "MDQ6VXNlcj`+alnum(10)+`"`,
		"message msg_01"+alnum(22)+" stop_reason end_turn",
		"request_id req_011C"+alnum(20),
		"tool_use id toolu_01"+alnum(22),
		"chatcmpl-"+alnum(29),
		"ipfs://Qm"+from("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 44),
		"send 0.1 ETH to 0x"+mixedHex(40),
		"Transaction "+"0x"+hex(64)+" confirmed in block "+digits(8),
		"bc1q"+from("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 38),
		"projects/"+digits(12)+"/locations/us-central1/functions/resize",
		"firebase project acme-shop-"+from(lowerSet+digitSet, 5),
		"mongodb ObjectId "+hex(24)+" not found",
		"build #"+digits(4)+" ("+hex(7)+") passed in 4m12s",
		"Stripe price price_1"+alnum(23),
		"sub_1"+alnum(23)+" renewed",
		"Twilio message SM"+hex(32)+" queued",
	)
}

// mixedHex is an EIP-55 style address: hex with letters in either case.
func mixedHex(n int) string {
	b := []byte(hex(n))
	for i := range b {
		if b[i] >= 'a' && r.IntN(2) == 0 {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

func dockerLooks() {
	addL("docker",
		"docker pull ghcr.io/acme/api@sha256:"+hex(64),
		"Digest: sha256:"+hex(64),
		"FROM node:20-alpine@sha256:"+hex(64),
		"#5 sha256:"+hex(64)+" 2.10MB / 2.10MB 0.3s done",
		"writing image sha256:"+hex(64)+" done",
		"Successfully built "+hex(12),
		"image: postgres:16.4-bookworm",
		"REPOSITORY   TAG     IMAGE ID       CREATED\nacme/api     1.4.2   "+hex(12)+"   2 days ago",
		"Deleted: sha256:"+hex(64),
		"docker inspect --format '{{.Id}}' "+hex(12),
	)
}

func lockLooks() {
	sri := func(n int) string { return b64std(n) }
	addL("lockfile",
		`"integrity": "sha512-`+sri(64)+`",`,
		`  integrity sha512-`+sri(64),
		`resolution: {integrity: sha512-`+sri(64)+`}`,
		`"integrity": "sha1-`+sri(20)+`",`,
		"github.com/spf13/cobra v1.10.2 h1:"+sri(32),
		"golang.org/x/sys v0.38.0/go.mod h1:"+sri(32),
		`"sha256:`+hex(64)+`",`,
		`    {file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:`+hex(64)+`"},`,
		`"resolved": "https://registry.npmjs.org/zod/-/zod-3.23.8.tgz",`,
		`"narHash": "sha256-`+sri(32)+`",`,
		`"reference": "`+hex(40)+`",`,
		`  "hex": {:hex, :jason, "1.4.4", "`+hex(64)+`", [:mix], [], "hexpm", "`+hex(64)+`"},`,
		`<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.min.js" integrity="sha384-`+sri(48)+`" crossorigin="anonymous"></script>`,
		"go: downloading github.com/acme/kit v1.2.3\ngo: verifying github.com/acme/kit@v1.2.3: checksum mismatch\n\tdownloaded: h1:"+sri(32)+"\n\tgo.sum:     h1:"+sri(32),
	)
}

func b64TextLooks() {
	for i, s := range sentences {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		switch i % 4 {
		case 0:
			addL("base64-text", "echo "+e+" | base64 -d")
		case 1:
			addL("base64-text", `{"message": "`+e+`", "encoding": "base64"}`)
		case 2:
			addL("base64-text", "Content-Transfer-Encoding: base64\n\n"+e)
		default:
			addL("base64-text", "payload="+e)
		}
	}
	for _, j := range []string{`{"id":48213,"ts":"2026-11-20T10:00:00Z"}`, `{"offset":200,"limit":100,"sort":"created_at"}`, `{"returnTo":"/dashboard/orders","nonce":"n-0S6_WzA2Mj"}`} {
		addL("base64-text", `"next_cursor": "`+base64.RawURLEncoding.EncodeToString([]byte(j))+`"`)
	}
	addL("base64-text",
		`"id": "`+base64.StdEncoding.EncodeToString([]byte("gid://shopify/Product/"+digits(13)))+`"`,
		`node(id: "`+base64.StdEncoding.EncodeToString([]byte("User:"+digits(6)))+`")`,
		"  config.yaml: "+base64.StdEncoding.EncodeToString([]byte("log_level: info\nworkers: 4\nqueue: orders\n")),
		`"content": "`+base64.StdEncoding.EncodeToString([]byte("# acme-api\n\nThe orders service. Run make test before pushing.\n"))+`",`,
	)
}

func b64BinaryLooks() {
	for _, m := range [][]byte{{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a}, {0xff, 0xd8, 0xff, 0xe0}, []byte("GIF89a"), []byte("%PDF-1.7\n"), {0x1f, 0x8b, 0x08, 0x00}, {0x00, 'a', 's', 'm', 1, 0, 0, 0}} {
		e := base64.StdEncoding.EncodeToString(append(m, randBytes(120+r.IntN(200))...))
		addL("base64-binary", pick(`{"icon": "`+e+`"}`, "  avatar: "+e, `"thumbnail": "`+e+`",`))
	}
}

func certLooks() {
	cert := "-----BEGIN CERTIFICATE-----\n" + pemBody("MIIDdzCCAl+gAwIBAgIE", 12) + "-----END CERTIFICATE-----"
	addL("certificate", cert, "$ openssl s_client -connect api.acme.io:443 -showcerts\n"+cert)
	addL("certificate", "-----BEGIN PUBLIC KEY-----\n"+pemBody("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 6)+"-----END PUBLIC KEY-----")
	addL("certificate", "-----BEGIN RSA PUBLIC KEY-----\n"+pemBody("MIIBCgKCAQEA", 5)+"-----END RSA PUBLIC KEY-----")
	addL("certificate", "-----BEGIN CERTIFICATE REQUEST-----\n"+pemBody("MIICijCCAXICAQAwRTEL", 10)+"-----END CERTIFICATE REQUEST-----")
	addL("certificate", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGVx"+strings.TrimSuffix(pemBody("", 8), "\n")+"\n=Ab3x\n-----END PGP PUBLIC KEY BLOCK-----")
	addL("public-key",
		"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ"+from(b64Set, 500)+" dev@laptop",
		"github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"+from(b64Set, 43),
		"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB"+from(b64Set, 80)+"= deploy@ci",
		`{"kty": "RSA", "kid": "`+hex(16)+`", "use": "sig", "n": "`+b64u(342)+`", "e": "AQAB"}`,
		`"x5c": ["MIIC`+from(b64Set, 300)+`"]`,
		"The key fingerprint is SHA256:"+from(b64Set, 43)+" dev@laptop",
		"age public key: age1"+from("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58),
	)
}

func placeholderLooks() {
	addL("placeholder",
		"export OPENAI_API_KEY=<your-api-key>",
		"ANTHROPIC_API_KEY=your-api-key-here",
		"GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"SLACK_BOT_TOKEN=xoxb-your-bot-token",
		"password: ${DB_PASSWORD}",
		"token: ${{ secrets.NPM_TOKEN }}",
		"password: {{ .Values.postgresql.auth.password }}",
		"DB_PASSWORD=%(db_password)s",
		"export VAULT_TOKEN=$(cat /run/secrets/vault-token)",
		"api_key: <REDACTED>",
		"SECRET_KEY=********",
		"client_secret = \"...\"",
		"STRIPE_SECRET_KEY=sk_live_...",
		"AWS_SECRET_ACCESS_KEY=<secret>",
		"API_TOKEN=REPLACE_ME",
		"password = \"changeme\"",
		"JWT_SECRET=dummy-secret-for-tests",
		"Authorization: Bearer <token>",
		"Authorization: Bearer $TOKEN",
		"curl -u admin:$ADMIN_PASSWORD https://jenkins.acme.io",
		"postgres://app:${DB_PASSWORD}@db:5432/orders",
		"https://oauth2:$CI_JOB_TOKEN@gitlab.com/acme/api.git",
		"mysql -u root -p",
		"docker login -u acme --password-stdin < token.txt",
		"OPENAI_API_KEY=sk-...",
		"GITLAB_TOKEN=glpat-XXXXXXXXXXXXXXXXXXXX",
		"api_key=YOUR_API_KEY",
		"password: \"{{ vault_db_password }}\"",
		"token = os.environ.get(\"API_TOKEN\", \"\")",
		"SECRET_KEY=<generate with: openssl rand -hex 32>",
		"REDIS_PASSWORD=",
		"\"apiKey\": \"\"",
		"access_token: null",
		"DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DB",
		"sk-ant-api03-...AA (your key from the console)",
		"AKIA****************",
		"ghp_••••••••••••••••Qx3z",
		"[REDACTED:github-token]",
		"password=[REDACTED:secret-assignment]",
	)
}

func exampleLooks() {
	addL("documented-example",
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nexport AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		`{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"}`,
		"For example: AKIAI44QH8DHBEXAMPLE and je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
		"GITHUB_TOKEN=ghp_EXAMPLE0000000000000000000000000000",
		"STRIPE_KEY=sk_test_EXAMPLEEXAMPLEEXAMPLE1234",
		"export API_KEY=example-key-1234567890abcdef",
		"SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
		"DATABASE_URL=postgres://user:password@localhost:5432/example",
		"curl -u user:password https://httpbin.org/basic-auth/user/password",
		"docker run -e POSTGRES_PASSWORD=postgres postgres:16",
		"redis://:password@localhost:6379",
	)
}

func codeLooks() {
	addL("code",
		"const password = process.env.DB_PASSWORD;",
		"password := os.Getenv(\"DB_PASSWORD\")",
		"db_password = settings.DATABASE_PASSWORD",
		"token = request.headers.get(\"Authorization\")",
		"api_key = config[\"api_key\"]",
		"self.secret_key = secret_key",
		"func (t *Token) Refresh(ctx context.Context) error {",
		"class PasswordResetTokenGenerator:",
		"SECRET_KEY_FALLBACKS = []",
		"const tokenRefreshThreshold = 5 * time.Minute",
		"if err := verifySignature(token, secret); err != nil {",
		"password = getpass.getpass(\"Password: \")",
		"api_key = os.environ[\"OPENAI_API_KEY\"]",
		"token := r.Header.Get(\"Authorization\")",
		"auth: { user: process.env.SMTP_USER, pass: process.env.SMTP_PASS },",
		"def login(username: str, password: str) -> Session:",
		"SECRET_KEY = env(\"SECRET_KEY\")",
		"  apiKey: string;",
		"private readonly token: string,",
		"func NewClient(token string, opts ...Option) *Client {",
		"password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
		"  token: Optional[str] = None",
		"let secret = std::env::var(\"APP_SECRET\").expect(\"APP_SECRET\");",
		"String password = System.getenv(\"DB_PASSWORD\");",
		"var apiKey = Environment.GetEnvironmentVariable(\"API_KEY\");",
		"$password = $_ENV['DB_PASSWORD'];",
		"credentials: 'include',",
		"withCredentials: true,",
		"expect(screen.getByLabelText('Password')).toBeInTheDocument();",
		"secret, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(\"prod/db\")})",
		"TestSessionExpiresWhenClockSkewExceedsFiveSeconds",
		"func (s *AuthenticationServiceImplementation) ValidateRefreshTokenSignature(ctx context.Context) error",
		"org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationProvider",
		"password: z.string().min(12).max(128),",
		"if (!token) throw new UnauthorizedException('missing token');",
		"keyFunc := func(t *jwt.Token) (any, error) { return publicKey, nil }",
		"@app.route('/reset-password/<token>', methods=['POST'])",
		"PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']",
		"const { data: { session } } = await supabase.auth.getSession();",
		"tokenizer = AutoTokenizer.from_pretrained(\"bert-base-uncased\")",
		"max_tokens: 4096",
		"token_count=1500",
		"\"tokenBudget\": 1500,",
	)
}

func pathLooks() {
	addL("path",
		"/etc/ssl/private/server.key",
		"~/.aws/credentials",
		"secrets/prod/db-password.txt",
		"C:\\Users\\dev\\AppData\\Roaming\\npm\\node_modules\\@anthropic-ai\\claude-code\\cli.js",
		"/var/run/secrets/kubernetes.io/serviceaccount/token",
		"internal/auth/token_store_test.go:142: expected token to be revoked",
		"src/components/UserProfileSettingsPasswordChangeForm.tsx",
		"node_modules/.pnpm/@babel+core@7.24.0_supports-color@9.4.0/node_modules/@babel/core",
		"/home/dev/.cache/go-build/3f/"+hex(64)+"-d",
		"/nix/store/"+from("0123456789abcdfghijklmnpqrsvwxyz", 32)+"-openssl-3.3.2/bin/openssl",
		"~/.ssh/id_ed25519.pub",
		"/run/secrets/api_token",
		"app/Http/Middleware/VerifyCsrfToken.php",
		"vendor/github.com/golang-jwt/jwt/v5/token.go",
		"gs://acme-backups/postgres/2026-11-20/base.tar.gz",
		"s3://acme-logs/AWSLogs/"+digits(12)+"/elasticloadbalancing/eu-west-1/2026/11/20/",
		"/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js",
	)
}

func versionLooks() {
	addL("version",
		"go version go1.26.8 linux/amd64",
		"node v20.20.2",
		"claude-code 2.1.331",
		"v1.0.0-rc.1+build.5114f85",
		"Python 3.11.2 (main, Mar 13 2026, 12:18:29) [GCC 12.2.0]",
		"OpenSSL 3.0.15 3 Sep 2024",
		"Chromium 131.0.6778.85 built on Debian 12.8",
		"kubectl version --client\nClient Version: v1.31.2\nKustomize Version: v5.4.2",
		"postgres (PostgreSQL) 15.10 (Debian 15.10-0+deb12u1)",
		"rustc 1.83.0 (90b35a623 2024-11-26)",
		"terraform v1.9.8 on linux_amd64 + provider registry.terraform.io/hashicorp/aws v5.76.0",
		"Docker version 27.3.1, build ce12230",
		"gitleaks version 8.21.2",
	)
}

func proseLooks() {
	addL("prose",
		"The token expires after 15 minutes; the refresh token after 30 days.",
		"Rotate the secret monthly and never commit it.",
		"password reset emails are sent from no-reply@acme.io",
		"Store the API key in Vault, never in the repo.",
		"Use a personal access token with the repo scope.",
		"Password: at least 12 characters, one digit.",
		"Secret: none configured for this environment",
		"token: expired",
		"API key: rotated on 2026-11-02",
		"The credentials file is read once at start-up.",
		"Why does the session token change on every request?",
		"Decided to keep the token bucket at 100 requests per minute per key.",
		"the secret sauce is the retry policy",
		"We hash passwords with argon2id and a per-user salt.",
		"Key: press Enter to continue",
		"Bearer tokens go in the Authorization header.",
		"auth failed: invalid credentials for user dana",
		"The private key never leaves the HSM.",
		"Set GITHUB_TOKEN in the repository secrets, then re-run the workflow.",
		"Passwords must not be reused across the last 5 changes.",
		"Token limit reached: 8192 of 8192 used.",
		"error: password authentication failed for user \"app\"",
		"JWT validation failed: token is expired by 3m12s",
		"Secrets Manager rotation succeeded for prod/db",
		"the keyboard shortcut is Ctrl+K",
	)
}

func urlLooks() {
	addL("url",
		"postgres://localhost:5432/orders",
		"postgresql://app@db.internal:5432/orders?sslmode=require",
		"https://user@github.com/acme/api.git",
		"git@github.com:acme/api.git",
		"ssh://git@git.acme.io:2222/platform/infra.git",
		"https://example.com/search?q=password+reset&page=2",
		"mongodb://mongo-0.mongo:27017,mongo-1.mongo:27017/?replicaSet=rs0",
		"redis://cache:6379/0",
		"https://github.com/acme/api/blob/"+hex(40)+"/internal/auth/token.go#L42",
		"https://accounts.google.com/o/oauth2/v2/auth?client_id="+digits(12)+"-"+from(lowerSet+digitSet, 32)+".apps.googleusercontent.com&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcallback&response_type=code&scope=openid%20email",
		"https://docs.python.org/3/library/secrets.html#secrets.token_urlsafe",
		"http://localhost:3000/api/auth/callback/github",
		"amqp://rabbitmq:5672",
		"https://registry.npmjs.org/@anthropic-ai%2fclaude-code",
		"https://api.github.com/repos/acme/api/git/trees/"+hex(40)+"?recursive=1",
		"https://cdn.acme.io/assets/main."+hex(8)+".js",
		"https://bit.ly/3"+alnum(6),
	)
}

func logLooks() {
	addL("log",
		"2026-11-20T10:14:03.512Z INFO  request_id="+hex(16)+" method=GET path=/v1/orders status=200 dur=12ms",
		"level=info msg=\"password reset requested\" user_id=981",
		"auth: token expired (exp=1732000000, now=1732000912)",
		"time=\"2026-11-20T10:14:03Z\" level=warning msg=\"invalid api key\" key_prefix=sk-proj-Ab12",
		"[2026-11-20 10:14:03] production.ERROR: Unauthenticated. {\"exception\":\"[object] (Illuminate\\\\Auth\\\\AuthenticationException(code: 0)\"}",
		"W1120 10:14:03.512341   1 reflector.go:539] failed to list *v1.Secret: secrets is forbidden",
		"token refreshed for client "+uuid()+" (scope: read:orders)",
		`{"level":"info","ts":1732097643.51,"msg":"issued token","sub":"user_4812","ttl":900}`,
		"ERROR 1045 (28000): Access denied for user 'app'@'10.0.3.17' (using password: YES)",
		"Nov 20 10:14:03 web1 sshd[2213]: Accepted publickey for deploy from 10.0.0.5 port 52210 ssh2: ED25519 SHA256:"+from(b64Set, 43),
		"GET /api/v1/orders?page=2&per_page=50 200 12.3ms",
		"172.17.0.1 - - [20/Nov/2026:10:14:03 +0000] \"POST /login HTTP/1.1\" 302 0",
		"ratelimit: key=ip:10.0.0.5 tokens=37/100",
	)
}

func traceLooks() {
	addL("trace",
		"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x"+hex(7)+"]\n\ngoroutine 1 [running]:\nmain.(*Server).handleToken(0xc000124000, {0x"+hex(7)+", 0xc00012e000})\n\t/src/server.go:88 +0x"+hex(2),
		"Traceback (most recent call last):\n  File \"/app/auth.py\", line 42, in verify\n    payload = jwt.decode(token, key, algorithms=[\"RS256\"])\njwt.exceptions.ExpiredSignatureError: Signature has expired",
		"TypeError: Cannot read properties of undefined (reading 'token')\n    at AuthService.refresh (/app/dist/auth.service.js:48:31)",
		"error[E0308]: mismatched types\n --> src/auth/secret.rs:14:22\n  |\n14 |     let key: [u8; 32] = secret;\n  |                         ^^^^^^ expected `[u8; 32]`, found `Vec<u8>`",
		"java.lang.IllegalStateException: Password encoder not configured\n\tat org.acme.auth.Config.passwordEncoder(Config.java:31)",
		"./auth.go:57:2: undefined: tokenSecret",
	)
}

func manifestLooks() {
	addL("manifest",
		"env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password",
		"envFrom:\n- secretRef:\n    name: app-secrets",
		"resource \"aws_secretsmanager_secret\" \"db\" {\n  name = \"prod/db\"\n}",
		"  password = random_password.db.result",
		"  password = var.db_password",
		"  master_password = data.aws_ssm_parameter.db.value",
		"      - name: Log in\n        uses: docker/login-action@v3\n        with:\n          username: acme\n          password: ${{ secrets.DOCKERHUB_TOKEN }}",
		"  token: ${{ secrets.GITHUB_TOKEN }}",
		"spec:\n  secretStoreRef:\n    name: aws\n  data:\n  - secretKey: password\n    remoteRef:\n      key: prod/db\n      property: password",
		"  tls:\n  - hosts: [api.acme.io]\n    secretName: api-tls",
		"kind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata: {}",
		"serviceAccountName: ci-deployer\nautomountServiceAccountToken: false",
		"spring.datasource.password=${DB_PASSWORD}",
	)
}

func webLooks() {
	addL("web",
		"color: #1f2937; background: #f9fafb;",
		"<script src=\"/_next/static/chunks/pages/_app-"+hex(16)+".js\"></script>",
		"dist/assets/index-"+b64u(8)+".js   142.31 kB │ gzip: 45.12 kB",
		"chunk-"+from(upperSet+digitSet, 8)+".js",
		"<input type=\"password\" name=\"password\" autocomplete=\"current-password\">",
		"<svg viewBox=\"0 0 24 24\"><path d=\"M12 2C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2z\"/></svg>",
		"class=\"flex items-center gap-2 rounded-md bg-slate-900 px-3 py-2 text-sm\"",
		"main.3f9a1c2e.chunk.js",
	)
}

func sqlLooks() {
	addL("sql",
		"CREATE TABLE users (id BIGINT PRIMARY KEY, email TEXT NOT NULL, password_hash TEXT NOT NULL);",
		"SELECT token, expires_at FROM sessions WHERE user_id = $1 AND revoked = false;",
		"ALTER TABLE api_keys ADD COLUMN key_prefix VARCHAR(12);",
		"UPDATE users SET password_hash = $1, password_changed_at = now() WHERE id = $2;",
		"CREATE INDEX idx_tokens_hash ON tokens USING hash (token_hash);",
		"GRANT SELECT ON secrets_audit TO readonly;",
	)
}

func hashLooks() {
	addL("password-hash",
		"$2b$12$"+from(alnumSet+"./", 53),
		"$argon2id$v=19$m=65536,t=3,p=4$"+b64u(22)+"$"+b64u(43),
		"$6$rounds=5000$"+from(alnumSet+"./", 16)+"$"+from(alnumSet+"./", 86),
		"root:$y$j9T$"+from(alnumSet+"./", 22)+"$"+from(alnumSet+"./", 43)+":19700:0:99999:7:::",
	)
}

func keywordLooks() {
	addL("keyword-safe-value",
		"SMTP_AUTH=login",
		"DISABLE_AUTH=true",
		"PROXY_AUTH=none",
		"REDIS_AUTH=false",
		"HTTP_AUTH=basic",
		"GITHUB_AUTH=oauth",
		"AUTH=jwt",
		"NEXT_PUBLIC_AUTH_PROVIDER=github",
		"TOKEN_EXPIRY=3600",
		"KEY_PREFIX=cache:v2:",
		"api_key_header: X-API-Key",
		"token_url: https://oauth2.googleapis.com/token",
		"password_min_length: 12",
		"secret_ref: prod/db",
		"token_type: Bearer",
		"grant_type: client_credentials",
		"AWS_REGION=eu-west-1",
		"AWS_PROFILE=staging",
		"GOOGLE_CLIENT_ID="+digits(12)+"-"+from(lowerSet+digitSet, 32)+".apps.googleusercontent.com",
		"SECRETS_PATH=/run/secrets/app",
		"CSRF_TOKEN_HEADER=X-CSRF-Token",
		"PASSWORD_RESET_TIMEOUT=259200",
		"AUTH_TYPE=oauth2",
		"KEYCLOAK_REALM=acme",
		"TOKEN_AUDIENCE=https://api.acme.io",
		"  auth: true",
		"secret: false",
		"SESSION_COOKIE_SECURE=true",
		"PASSWORD_REQUIRE_SYMBOLS=1",
		"JWT_ALGORITHM=RS256",
	)
}

func opaqueLooks() {
	addL("opaque-id",
		`"nextPageToken": "`+pick("CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3", "Cg4KDGFjbWUtb3JkZXJz")+`"`,
		`"page_token": "`+base64.RawURLEncoding.EncodeToString([]byte(`{"after":"ord_`+digits(6)+`"}`))+`"`,
		`"continuationToken": "`+base64.StdEncoding.EncodeToString([]byte(`{"token":"+RID:~`+digits(5)+`","range":{"min":"","max":"FF"}}`))+`"`,
		`"resumeToken": {"_data": "82`+strings.ToUpper(hex(60))+`"}`,
		"STRIPE_PUBLISHABLE_KEY=pk_test_51"+alnum(97),
	)
}

func main() {
	providerCases()
	privateKeys()
	jwts()
	connectionStrings()
	assignments()
	configFiles()
	cliFlags()
	headers()
	proseSecrets()
	credentialFiles()
	awsPairs()
	entropyNearWords()

	gitLooks()
	checksumLooks()
	uuidLooks()
	idLooks()
	dockerLooks()
	lockLooks()
	b64TextLooks()
	b64BinaryLooks()
	certLooks()
	placeholderLooks()
	exampleLooks()
	codeLooks()
	pathLooks()
	versionLooks()
	proseLooks()
	urlLooks()
	logLooks()
	traceLooks()
	manifestLooks()
	webLooks()
	sqlLooks()
	hashLooks()
	keywordLooks()
	opaqueLooks()

	write("secrets.jsonl", secrets)
	write("lookalikes.jsonl", looks)
	fmt.Printf("%d secrets, %d look-alikes\n", len(secrets), len(looks))
}

func write[T any](name string, cases []T) {
	f, err := os.Create(name)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			panic(err)
		}
	}
}
