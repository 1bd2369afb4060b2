package graph

import "strings"

// Word lists of the extractor. They decide what is never an entity; they
// are small on purpose and documented in docs/knowledge.md.

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// commonWords are ordinary English words (lower case): capitalised at the
// start of a sentence they are not names, and an identifier made only of
// them ("follow-up", "read-only") is not an entity.
var commonWords = set(`
a about above after again against all almost also although always am among an and another any anyone anything
anyway are around as at away back be because been before being below between both but by can cannot could
did do does doing done down during each either else enough even ever every everyone everything few first for
from further had has have having he her here hers herself him himself his how however i if in into is it its
itself just last later least less let like many may maybe me might more most much must my myself neither never
next no nobody none nor not nothing now of off often on once one only or other others otherwise our ours
ourselves out over own per perhaps please quite rather really same she should since so some someone something
sometimes soon still such than that the their theirs them themselves then there therefore these they this
those though through thus to today tomorrow too toward under unless until up upon us usually very was we well
were what whatever when whenever where whether which while who whoever whom whose why will with within without
would yes yesterday yet you your yours yourself yourselves
add added adding after again agree agreed ask asked avoid be become begin build call came change check choose
chose come consider continue could create decide decided delete deploy did do done drop ensure expect fail
failed find fix fixed follow get give go going gone got guess had have help keep kept know learn learned leave
let look make made mark merge move moved need needed note open pick plan prefer put read remember remove
rename replace restart retry review revert run said say see seem seems send set should show skip start stop
take tell test think tried try turn update use used want wait was watch were will work worked write wrote
action answer approach area bug build cache case cause change check clock code config context cost count data
date day decision default design detail document error event example fact failure feature file fix flag flow
goal guess idea important incident issue item job lesson level limit list log memory message method mode model
month name note number option order outcome part path pattern plan point problem process question reason
record request result review risk root rule service session set side source sources state status step story
summary system table task team test thing time todo tool type user value version view way week work year
caution warning tip update context background conclusion conclusions finding findings observation observations
question questions answer answers next steps step result results reference references link links see also
new old good bad big small high low long short full empty right wrong true false main same other early late
real live local remote public private final current previous third second single double multi self non pre
re un in on off out up down end start term time only read write follow well known built party date level side
effect back key rate load dead letter least once most short lived lock free hand off tear line call site
`)

// pronouns and determiners are never entities, in any case.
var pronouns = set(`i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
this that these those who whom whose which what there here someone something anyone anything everyone everything
nobody nothing one ones`)

// months and weekdays are dates, not entities.
var calendar = set(`january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday
mon tue tues wed thu thur thurs fri sat sun q1 q2 q3 q4 h1 h2`)

// genericAcronyms name kinds of things, not a thing.
var genericAcronyms = set(`api apis url urls uri json xml yaml csv html css http https sql db dbs ci cd pr prs ui ux
todo fixme note ok id ids cli sdk os io ttl eta fyi asap eod qa mvp lgtm rfc sla slo sli kpi am pm utc gmt cpu
gpu ram ssd hdd dns ip tcp udp ssh ftp p0 p1 p2 p99 p95 p50 ms rps qps faq tl dr tldr imo imho btw wip ack nack
rest crud orm etl llm ai ml wal gc oom abi eof fft mac bpe oob soc rc ftbfs nmu tofu sbom rpc pdf dsn ascii soname pragma utf`)

// componentSuffixes end identifiers of services and components
// ("auth-service", "payments-api").
var componentSuffixes = set(`service svc api worker server gateway indexer cache queue proxy client bot cli app job
pipeline cluster operator daemon agent relay generator scheduler consumer producer manager router resizer
store db engine runner collector exporter controller handler harness portal`)

// orgSuffixes end organisation names.
var orgSuffixes = set(`corp corporation inc ltd llc labs gmbh co company foundation`)

// compoundHeads open ordinary compounds that end in a component word
// ("self-service", "micro-service"): not names.
var compoundHeads = set(`self micro multi non per sub inter web`)

// clauseBreaks may follow an entity that is the object of a relation;
// any other lower-case word after it means the entity only qualifies
// the real object ("maintains the Terraform modules").
var clauseBreaks = set(`for in on at to from with by of over via into through since until after before during
within without across inside outside under above below behind beyond except including like unlike per against among around upon
and or but so because which that who when while if as than where whereas though although nor yet then
is are was were has have had will would should must can could may might does did do also too now again
instead first later today yesterday there here only each both either all every daily weekly nightly`)

// fillers may stand between an entity and a relation ("X also uses Y").
var fillers = set(`is are was were be been has have had will would should must can could may might do does did also now still
directly heavily only already just always then currently mostly partly actually really usually indeed even`)

// determiners may stand before an entity ("uses the Y").
var determiners = set(`the a an our their its his her this that these those my your every each all some either both`)

// negations before a relation cancel it ("must not depend on").
var negations = set(`not never no longer cannot can't don't doesn't didn't won't shouldn't mustn't isn't aren't wasn't weren't without`)

// humanVerbs after a name say it is a person.
var humanVerbs = set(`said says asked asks thinks thought prefers preferred wants wanted approved approves reviewed reviews
suggested suggests agreed agrees paired wrote writes fixed fixes leads led owns owned maintains maintained created
creates signed decided decides mentioned noted proposed proposes believes believed is was`)

// knownTech types well-known technologies (and finds their lower-case
// mentions). Keys are lower case; values are the usual spelling.
var knownTech = func() map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(`PostgreSQL Postgres MySQL SQLite Redis Kafka RabbitMQ Elasticsearch OpenSearch
MongoDB DynamoDB Cassandra ClickHouse Kubernetes Docker Terraform Ansible Helm Prometheus Grafana Datadog Sentry
Nginx Envoy Vault Consul Jenkins GitHub GitLab Bitbucket Jira Slack Stripe SendGrid Twilio OpenTelemetry Jaeger
Kibana Fluentd Logstash Airflow Spark Flink Hadoop Snowflake BigQuery Redshift React Vue Angular Svelte GraphQL
gRPC Protobuf NTP JWT JWKS TLS SSL OAuth SAML LDAP Kerberos Go Golang Rust Python Java Kotlin Scala TypeScript
JavaScript Ruby Rails Django Flask Node Deno Bun Linux Windows macOS iOS Android AWS GCP Azure S3 EC2 Lambda
CloudFront Cloudflare Fastly Heroku Vercel Netlify Locust Celery Sidekiq memcached etcd ZooKeeper NATS Pulsar
Honeycomb PagerDuty Opsgenie Okta Auth0 Keycloak WebAssembly Wasm Bazel Make CMake npm pip Cargo Maven Gradle`) {
		m[strings.ToLower(w)] = w
	}
	return m
}()

// relativePronouns may stand between a subject and its verb ("an
// HTTPClient that uses ...").
var relativePronouns = set(`that which who whom`)

// prepositions open a phrase whose noun is no subject ("libraries on
// Linux use ..."); "in" is left out: "the consumer in email-worker reads"
// is the service's.
var prepositions = set(`on at for from with to of by into onto via under over about within without across through`)

// copulas and articles open a predicate that says what its subject is
// ("Tern is a migration tool that uses pgx").
var (
	copulas  = set(`is are was were`)
	articles = set(`a an the`)
)

// namingNouns say what the mention before them is, and so leave it the
// subject or object: "the zstd package", "the SIGPROF signal" (a plural
// says what is made with it: "the Terraform modules").
var namingNouns = set(`package library tool command module binary driver plugin program crate daemon format protocol utility
script project repository function method type interface struct structure variable option field file signal macro flag setting
class constant wrapper helper API`)

// units are symbols of units of measure, as written (case matters: "MB"
// is a unit, "mb" may be a name).
var units = set(`Hz kHz MHz GHz THz B KB MB GB TB PB KiB MiB GiB TiB PiB kB Kb Mb Gb kb bps kbps Mbps Gbps ms µs ns us
sec secs mins hrs fps dpi ppi px pt em rem vh vw mm cm km kg mg mAh mW kW MW GW Wh kWh RPS QPS TPS IOPS LOC
nanosecond nanoseconds microsecond microseconds millisecond milliseconds`)

// codeJargon are the keywords, built-in types and everyday abbreviations
// of programming, in any case: words of code, not names of things.
var codeJargon = set(`nil null true false none undefined void err errs ctx struct structs func funcs fn def const var let int
uint float double bool boolean byte bytes rune runes str string strings char error any map maps chan slice slices array enum
impl trait mut pub self this args argv argc kwargs stdin stdout stderr regex regexp regexes mutex mutexes goroutine goroutines
async await sync repo repos config configs env tmp src dst dir dirs pkg pkgs lib libs util utils init ptr buf len idx foo bar
baz qux symlink symlinks hostname hostnames localhost codec codecs iterator iterators getter setter callback callbacks
namespace namespaces runtime dep deps stddev`)
