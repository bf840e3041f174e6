// Package api serves interface A's channel resources (POST /internal/a/channel-connection,
// channel-mapping, channel-log, channel-conflict; docs/channels.md, "Interface A
// resources"): an account's connections to channel managers, the mapping of its properties
// to their ids, the channel log and the reservation conflicts.
package api

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/targets"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// Properties resolves an account's internal code to its property id (poller.ErrNoProperty
// when the account has no such property): booking-svc's GET /internal/ical/property, as the
// ical-feed resource resolves it.
type Properties interface {
	PropertyID(ctx context.Context, account, internalCode string) (int64, error)
}

// Policy tells whether an account may name private addresses (the operator's switch).
type Policy interface {
	AllowsPrivate(ctx context.Context, account string) (bool, error)
}

// API serves the four resources.
type API struct {
	Connections channel.Connections
	Log         channel.Log
	Conflicts   channel.Conflicts
	Properties  Properties
	Policy      Policy
	AllowHTTP   bool
	// Adapter returns the adapter of a name (nil: not available in this build).
	Adapter func(name string) channel.Adapter
	// MarkDirty marks a mapped property for an ARI sync (full: every date); nil, or
	// answering ErrNotSending, while ARI sending is not wired (then nothing is marked and
	// sync answers 503).
	MarkDirty func(ctx context.Context, account string, connection, property int64, full bool) error
	// TestTimeout bounds the test action's request (0: 20 s).
	TestTimeout time.Duration
	Now         func() time.Time
}

// Register mounts the resources behind the signature check.
func (a *API) Register(app *fiber.App, auth *tenancy.Verifier) {
	g := app.Group("/internal/a", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth))
	g.Post("/channel-connection", a.connection)
	g.Post("/channel-mapping", a.mapping)
	g.Post("/channel-log", a.log)
	g.Post("/channel-conflict", a.conflict)
	// Edge's admin API: the account's connections with their state (docs/channels.md).
	app.Group("/internal/account", tenancyfiber.Require(auth)).Get("/channels", a.accountChannels)
}

// accountChannels: GET /internal/account/channels → {"connections":[connection…]}, plain
// JSON as the other account routes answer, for edge's GET /admin/v1/accounts/{id}/channels.
func (a *API) accountChannels(c *fiber.Ctx) error {
	ctx := c.UserContext()
	account := tenancyfiber.From(c).AccountID
	list, err := a.Connections.ListConnections(ctx, account)
	if err != nil {
		return err
	}
	counts, err := a.counts(ctx, account)
	if err != nil {
		return err
	}
	out := make([]connectionJSON, 0, len(list))
	for _, cn := range list {
		out = append(out, counts.of(toConnectionJSON(cn)))
	}
	return c.JSON(fiber.Map{"connections": out})
}

// ErrNotSending: ARI sending is not wired in this process (MarkDirty's answer).
var ErrNotSending = errors.New("sending to channel managers is not running")

// mark marks a mapped property for a full sync; nothing when sending is not wired.
func (a *API) mark(ctx context.Context, account string, connection, property int64) error {
	if a.MarkDirty == nil {
		return nil
	}
	if err := a.MarkDirty(ctx, account, connection, property, true); err != nil && !errors.Is(err, ErrNotSending) {
		return syncNotStarted(err)
	}
	return nil
}

// PublicURLHeader is edge's public base URL, sent with every request it forwards: the
// inbound URL is built on it.
const PublicURLHeader = "X-Vros-Public-URL"

// Limits of the fields.
const (
	MaxEndpoint   = 2000
	MaxCredential = 500
	MaxRemoteID   = 100
	MaxRatePlans  = 100
	MaxNote       = 1000
	MaxQuery      = 100
	TokenBytes    = 32
)

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now().UTC()
	}
	return time.Now().UTC()
}

var idRule = fields.Int{Required: true, Min: 1, Max: 1 << 53}

// channelName is the markup channel's name, as channel-markup reads it (stored lower case).
var channelName = fields.Str{Required: true, Min: 1, Max: 32, Pattern: nameRe, PatternMsg: "must contain only letters a-z, digits, _ and -"}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ---- channel-connection

var connectionActions = []string{"create", "list", "get", "update", "delete", "rotate_token", "test"}

func (a *API) connection(c *fiber.Ctx) error {
	ctx := c.UserContext()
	account := tenancyfiber.From(c).AccountID
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: connectionActions})
	if err := v.Err(); err != nil {
		return err
	}
	switch action {
	case "create":
		return a.createConnection(c, ctx, account, o, &v)
	case "list":
		list, err := a.Connections.ListConnections(ctx, account)
		if err != nil {
			return err
		}
		counts, err := a.counts(ctx, account)
		if err != nil {
			return err
		}
		out := make([]connectionJSON, 0, len(list))
		for _, cn := range list {
			out = append(out, counts.of(toConnectionJSON(cn)))
		}
		return httpapi.A(c, fiber.Map{"connections": out})
	}
	f := o.Object("connection", true)
	n, _ := f.Int("connection_id", idRule)
	id := int64(n)
	if action == "update" {
		return a.updateConnection(c, ctx, account, f, id, &v)
	}
	if err := v.Err(); err != nil {
		return err
	}
	switch action {
	case "get":
		cn, err := a.Connections.Connection(ctx, account, id)
		if err != nil {
			return connNotFound(err, id)
		}
		counts, err := a.counts(ctx, account)
		if err != nil {
			return err
		}
		return httpapi.A(c, counts.of(toConnectionJSON(cn)))
	case "delete":
		if err := a.Connections.DeleteConnection(ctx, account, id); err != nil {
			return connNotFound(err, id)
		}
		return httpapi.A(c, fiber.Map{"connection_id": id, "deleted": true})
	case "rotate_token":
		token := newToken()
		cn, err := a.Connections.ModifyConnection(ctx, account, id, func(cn *channel.Connection) error {
			cn.InboundToken, cn.UpdatedAt = token, a.now()
			return nil
		})
		if err != nil {
			return connNotFound(err, id)
		}
		counts, err := a.counts(ctx, account)
		if err != nil {
			return err
		}
		return httpapi.A(c, a.withToken(c, counts.of(toConnectionJSON(cn)), cn))
	}
	return a.test(c, ctx, account, id)
}

func (a *API) createConnection(c *fiber.Ctx, ctx context.Context, account string, o *fields.Object, v *fields.Violations) error {
	f := o.Object("connection", true)
	adapter, _ := f.String("adapter", fields.Str{Required: true, OneOf: []string{channel.Channex, channel.OpenTravel}, IgnoreCase: true})
	endpoint, _ := f.String("endpoint", fields.Str{Required: true, Max: MaxEndpoint})
	if endpoint != "" {
		if err := a.checkEndpoint(ctx, account, f, endpoint); err != nil {
			return err
		}
	}
	var creds channel.Credentials
	if adapter != "" {
		creds = readCredentials(f, adapter, nil)
	}
	ch := adapter
	if f.Has("channel") {
		if s, ok := f.String("channel", channelName); ok {
			ch = strings.ToLower(s)
		}
	}
	enabled := true
	if b, ok := f.Bool("enabled", false); ok {
		enabled = b
	}
	days, ok := f.Int("days", fields.Int{Min: 1, Max: channel.MaxDays})
	if !ok {
		days = channel.DefaultDays
	}
	if err := v.Err(); err != nil {
		return err
	}
	id, err := a.Connections.NextID(ctx)
	if err != nil {
		return err
	}
	now := a.now()
	cn := channel.Connection{Account: account, ID: id, Adapter: adapter, Endpoint: endpoint, Credentials: creds, Channel: ch,
		Enabled: enabled, InboundToken: newToken(), Days: days, CreatedAt: now, UpdatedAt: now}
	if err := a.Connections.AddConnection(ctx, cn); err != nil {
		return err
	}
	return httpapi.A(c, a.withToken(c, toConnectionJSON(cn), cn))
}

// readCredentials reads connection.credentials for adapter over have (an update: the members
// not sent stay): Channex takes api_key, OpenTravel username and password, each required in
// the result; the other adapter's members are refused.
func readCredentials(f *fields.Object, adapter string, have *channel.Credentials) channel.Credentials {
	var out channel.Credentials
	if have != nil {
		out = *have
	}
	cr := f.Object("credentials", have == nil)
	if cr == nil {
		return out
	}
	rule := fields.Str{Required: true, Max: MaxCredential}
	field := func(name string, dst *string) {
		if have == nil || cr.Has(name) {
			if s, ok := cr.String(name, rule); ok {
				*dst = s
			}
		}
	}
	switch adapter {
	case channel.Channex:
		field("api_key", &out.APIKey)
		for _, k := range []string{"username", "password"} {
			if cr.Has(k) {
				cr.Add(k, "is not used by the channex adapter (it takes api_key)")
			}
		}
	case channel.OpenTravel:
		field("username", &out.Username)
		field("password", &out.Password)
		if cr.Has("api_key") {
			cr.Add("api_key", "is not used by the opentravel adapter (it takes username and password)")
		}
	}
	return out
}

func (a *API) updateConnection(c *fiber.Ctx, ctx context.Context, account string, f *fields.Object, id int64, v *fields.Violations) error {
	var endpoint, ch *string
	var enabled *bool
	var days *int
	if f.Has("endpoint") {
		if s, ok := f.String("endpoint", fields.Str{Required: true, Max: MaxEndpoint}); ok {
			if err := a.checkEndpoint(ctx, account, f, s); err != nil {
				return err
			}
			endpoint = &s
		}
	}
	if f.Has("channel") {
		if s, ok := f.String("channel", channelName); ok {
			s = strings.ToLower(s)
			ch = &s
		}
	}
	if f.Has("enabled") {
		if b, ok := f.Bool("enabled", true); ok {
			enabled = &b
		}
	}
	if f.Has("days") {
		if n, ok := f.Int("days", fields.Int{Required: true, Min: 1, Max: channel.MaxDays}); ok {
			days = &n
		}
	}
	if f.Has("credentials") {
		f.Object("credentials", false) // a value that is not an object is named now
	}
	for _, k := range f.Keys() {
		switch k {
		case "connection_id", "endpoint", "credentials", "channel", "enabled", "days":
		default:
			f.Add(k, "cannot be changed; an update takes endpoint, credentials, channel, enabled and days")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	// The credentials' rules depend on the stored adapter: read inside the change, which
	// writes nothing when they are refused.
	resync := false
	cn, err := a.Connections.ModifyConnection(ctx, account, id, func(cn *channel.Connection) error {
		before := *cn
		if f.Has("credentials") {
			creds := readCredentials(f, cn.Adapter, &cn.Credentials)
			if err := v.Err(); err != nil {
				return err
			}
			cn.Credentials = creds
		}
		if endpoint != nil {
			cn.Endpoint = *endpoint
		}
		if ch != nil {
			cn.Channel = *ch
		}
		if enabled != nil {
			cn.Enabled = *enabled
		}
		if days != nil {
			cn.Days = *days
		}
		cn.UpdatedAt = a.now()
		resync = cn.Enabled && (!before.Enabled || cn.Endpoint != before.Endpoint || cn.Credentials != before.Credentials ||
			cn.Channel != before.Channel || cn.Days != before.Days)
		return nil
	})
	if err != nil {
		return connNotFound(err, id)
	}
	if resync {
		// Enabled again, or sending somewhere else, other prices or dates: everything of
		// the connection again (docs/channels.md).
		if err := a.markConnection(ctx, account, id); err != nil {
			return err
		}
	}
	counts, err := a.counts(ctx, account)
	if err != nil {
		return err
	}
	return httpapi.A(c, counts.of(toConnectionJSON(cn)))
}

// markConnection marks every enabled mapping of a connection for a full sync.
func (a *API) markConnection(ctx context.Context, account string, id int64) error {
	if a.MarkDirty == nil {
		return nil
	}
	maps, err := a.Connections.Mappings(ctx, account, id, 0)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Enabled {
			if err := a.mark(ctx, account, id, m.PropertyID); err != nil {
				return err
			}
		}
	}
	return nil
}

func syncNotStarted(err error) error {
	return httpapi.Unavailable("the change is saved, but its full sync could not be started now (" + err.Error() + "); use channel-mapping sync")
}

func (a *API) test(c *fiber.Ctx, ctx context.Context, account string, id int64) error {
	cn, err := a.Connections.Connection(ctx, account, id)
	if err != nil {
		return connNotFound(err, id)
	}
	var ad channel.Adapter
	if a.Adapter != nil {
		ad = a.Adapter(cn.Adapter)
	}
	if ad == nil {
		return httpapi.Unavailable("the " + cn.Adapter + " adapter is not available")
	}
	// The endpoint is checked again under the account's switch as it is now.
	allow, err := a.Policy.AllowsPrivate(ctx, account)
	if err != nil {
		return err
	}
	if msg := targets.Check(ctx, cn.Endpoint, targets.Rules{AllowHTTP: a.AllowHTTP, AllowPrivate: allow}); msg != "" {
		return httpapi.InvalidField("connection.endpoint", "the stored endpoint "+msg)
	}
	timeout := a.TestTimeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last channel.Exchange
	start := time.Now()
	err = ad.Test(tctx, cn, func(ex channel.Exchange) {
		last = ex
		if ex.Kind == "" {
			ex.Kind = channel.KindTest
		}
		// The log keeps it; a failure to log does not change the test's answer.
		_ = a.Log.Append(context.WithoutCancel(ctx), channel.EntryOf(cn, 0, "out", ex, ""))
	})
	out := fiber.Map{"connection_id": id, "ok": err == nil, "http_status": last.HTTPStatus,
		"duration_ms": time.Since(start).Milliseconds(), "error": ""}
	if err != nil {
		out["error"] = err.Error()
	}
	return httpapi.A(c, out)
}

func (a *API) checkEndpoint(ctx context.Context, account string, f *fields.Object, raw string) error {
	allow, err := a.Policy.AllowsPrivate(ctx, account)
	if err != nil {
		return err
	}
	if msg := targets.Check(ctx, raw, targets.Rules{AllowHTTP: a.AllowHTTP, AllowPrivate: allow}); msg != "" {
		f.Add("endpoint", msg)
	}
	return nil
}

func newToken() string {
	b := make([]byte, TokenBytes)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func connNotFound(err error, id int64) error {
	if errors.Is(err, channel.ErrNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, "connection "+strconv.FormatInt(id, 10)+" does not exist")
	}
	return err
}

type connectionJSON struct {
	ConnectionID   int64     `json:"connection_id"`
	Adapter        string    `json:"adapter"`
	Endpoint       string    `json:"endpoint"`
	CredentialsSet bool      `json:"credentials_set"`
	Channel        string    `json:"channel"`
	Enabled        bool      `json:"enabled"`
	Days           int       `json:"days"`
	InboundToken   *string   `json:"inbound_token"`
	InboundURL     *string   `json:"inbound_url"`
	Mappings       int       `json:"mappings"`
	OpenConflicts  int       `json:"open_conflicts"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

func toConnectionJSON(c channel.Connection) connectionJSON {
	set := c.APIKey != ""
	if c.Adapter == channel.OpenTravel {
		set = c.Username != "" && c.Password != ""
	}
	return connectionJSON{ConnectionID: c.ID, Adapter: c.Adapter, Endpoint: c.Endpoint, CredentialsSet: set, Channel: c.Channel,
		Enabled: c.Enabled, Days: c.Days, CreatedAt: c.CreatedAt.UTC().Truncate(time.Second), UpdatedAt: c.UpdatedAt.UTC().Truncate(time.Second)}
}

// withToken adds the inbound token and URL (only create and rotate_token know them).
func (a *API) withToken(c *fiber.Ctx, j connectionJSON, cn channel.Connection) connectionJSON {
	tok := cn.InboundToken
	j.InboundToken = &tok
	u := InboundPath(cn.Adapter, tok)
	if base := strings.TrimRight(c.Get(PublicURLHeader), "/"); base != "" {
		u = base + u
	}
	j.InboundURL = &u
	return j
}

// InboundPath is the public path of a connection's inbound route.
func InboundPath(adapter, token string) string { return "/channels/" + adapter + "/" + token }

// counts are an account's mappings and open conflicts per connection.
type counts struct{ mappings, conflicts map[int64]int }

func (a *API) counts(ctx context.Context, account string) (counts, error) {
	out := counts{mappings: map[int64]int{}, conflicts: map[int64]int{}}
	maps, err := a.Connections.Mappings(ctx, account, 0, 0)
	if err != nil {
		return out, err
	}
	for _, m := range maps {
		out.mappings[m.ConnectionID]++
	}
	open, err := a.Conflicts.List(ctx, account, true)
	if err != nil {
		return out, err
	}
	for _, c := range open {
		out.conflicts[c.ConnectionID]++
	}
	return out, nil
}

func (n counts) of(j connectionJSON) connectionJSON {
	j.Mappings, j.OpenConflicts = n.mappings[j.ConnectionID], n.conflicts[j.ConnectionID]
	return j
}
