package admin

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/backend"
	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
)

// exported are the services whose export zips an account's export holds, in this order.
var exported = []string{backend.PropertySvc, backend.BookingSvc}

// serviceFailed is the answer when a service the route needs failed: 502 naming it. Never
// a partial answer presented as whole.
func serviceFailed(err error) error {
	if e, ok := backend.IsServiceError(err); ok {
		return &httpapi.Error{HTTP: http.StatusBadGateway, Type: "bad_gateway", Status: httpapi.StatusUnavailable,
			Message: e.Error() + "; nothing was answered in its place, retry later"}
	}
	return err
}

// liveAccount is the account of the route's id, 404 when it does not exist (or is deleted).
func (a *API) liveAccount(c *fiber.Ctx) (account.Account, error) {
	id := strings.Clone(c.Params("id"))
	acc, err := a.accounts.Get(c.UserContext(), id)
	if err != nil {
		return account.Account{}, notFound(err, id)
	}
	return acc, nil
}

// UsageReport is an account's usage within a period: edge's request counts, then the
// services' figures, in this fixed order.
type UsageReport struct {
	AccountID  string                      `json:"account_id"`
	From       time.Time                   `json:"from"`
	To         time.Time                   `json:"to"`
	Requests   map[string]map[string]int64 `json:"requests"`
	Properties json.RawMessage             `json:"properties"`
	Photos     json.RawMessage             `json:"photos"`
	Bookings   json.RawMessage             `json:"bookings"`
	Blocks     json.RawMessage             `json:"blocks"`
}

// Bounds of a usage period.
const (
	defaultPeriod = 30 * 24 * time.Hour
	maxPeriod     = 366 * 24 * time.Hour
)

// usage: GET /admin/v1/accounts/{id}/usage?from=&to= → edge's request counts of the period
// and property-svc's and booking-svc's figures (docs/usage.md).
func (a *API) usage(c *fiber.Ctx) error {
	acc, err := a.liveAccount(c)
	if err != nil {
		return err
	}
	from, to, err := period(c.Query("from"), c.Query("to"), time.Now())
	if err != nil {
		return err
	}
	v, err := a.Usage(c.UserContext(), acc.ID, from, to)
	if err != nil {
		return err
	}
	return httpapi.A(c, v)
}

// Usage is the usage report of account id within [from, to): edge's request counts and the
// services' figures (the admin API's usage answer, the panel's account page).
func (a *API) Usage(ctx context.Context, id string, from, to time.Time) (UsageReport, error) {
	reqs, err := a.usageStore.Requests(ctx, id, from, to)
	if err != nil {
		return UsageReport{}, err
	}
	v := UsageReport{AccountID: id, From: from, To: to, Requests: reqs.Map()}
	for _, s := range []struct {
		service string
		members []string
		dst     []*json.RawMessage
	}{
		{backend.PropertySvc, []string{"properties", "photos"}, []*json.RawMessage{&v.Properties, &v.Photos}},
		{backend.BookingSvc, []string{"bookings", "blocks"}, []*json.RawMessage{&v.Bookings, &v.Blocks}},
	} {
		got, err := a.services.Usage(ctx, s.service, id, from, to)
		if err != nil {
			return UsageReport{}, serviceFailed(err)
		}
		for i, m := range s.members {
			raw, ok := got[m]
			if !ok || len(raw) == 0 || raw[0] != '{' {
				return UsageReport{}, serviceFailed(&backend.Error{Service: s.service, Status: http.StatusOK, Detail: fmt.Sprintf("its usage answer has no %q object", m)})
			}
			*s.dst[i] = raw
		}
	}
	return v, nil
}

// period reads a usage period: from and to, RFC 3339 times or dates (YYYY-MM-DD, midnight
// UTC); by default the 30 days before now, or the 30 days before to or after from when
// only one is given. to must be after from, at most 366 days.
func period(rawFrom, rawTo string, now time.Time) (from, to time.Time, err error) {
	read := func(name, raw string) (time.Time, error) {
		if t, err := time.Parse(time.RFC3339, raw); err == nil {
			return t.UTC(), nil
		}
		if t, err := time.Parse(time.DateOnly, raw); err == nil {
			return t, nil
		}
		return time.Time{}, httpapi.InvalidField(name, "must be an RFC 3339 time (2026-01-31T00:00:00Z) or a date (2026-01-31)")
	}
	switch {
	case rawFrom == "" && rawTo == "":
		to = now.UTC().Truncate(time.Second)
		from = to.Add(-defaultPeriod)
	case rawFrom == "":
		if to, err = read("to", rawTo); err != nil {
			return
		}
		from = to.Add(-defaultPeriod)
	case rawTo == "":
		if from, err = read("from", rawFrom); err != nil {
			return
		}
		to = from.Add(defaultPeriod)
	default:
		if from, err = read("from", rawFrom); err != nil {
			return
		}
		if to, err = read("to", rawTo); err != nil {
			return
		}
	}
	switch {
	case !to.After(from):
		return time.Time{}, time.Time{}, httpapi.InvalidField("to", "must be after from")
	case to.Sub(from) > maxPeriod:
		return time.Time{}, time.Time{}, httpapi.InvalidField("to", "must be at most 366 days after from")
	}
	return from, to, nil
}

// exportAccount is the account as its export holds it: no secret, hash or credential
// identifier.
type exportAccount struct {
	AccountID         string    `json:"account_id"`
	Name              string    `json:"name"`
	Status            string    `json:"status"`
	Sandbox           bool      `json:"sandbox"`
	LegacyCredentials bool      `json:"legacy_credentials"`
	Plan              planView  `json:"plan"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

func exportOf(acc account.Account) exportAccount {
	return exportAccount{AccountID: acc.ID, Name: acc.Name, Status: string(acc.Status), Sandbox: acc.Sandbox,
		LegacyCredentials: !acc.LegacyOff, Plan: planView(acc.Plan), CreatedAt: acc.CreatedAt, UpdatedAt: acc.UpdatedAt}
}

// exportManifest is manifest.json, the export's first entry.
type exportManifest struct {
	AccountID  string              `json:"account_id"`
	ExportedAt time.Time           `json:"exported_at"`
	Records    map[string][]string `json:"records"`
}

// serviceManifest is the manifest a service's export holds as <service>/manifest.json.
type serviceManifest struct {
	Service   string              `json:"service"`
	AccountID string              `json:"account_id"`
	Records   map[string][]string `json:"records"`
}

// serviceExport is one service's export zip, fetched into an unlinked temporary file.
type serviceExport struct {
	service string
	file    *os.File
	zip     *zip.Reader
}

// export: GET /admin/v1/accounts/{id}/export → a zip streamed to the client:
// manifest.json first, then edge/account.json, edge/audit.json, then every entry of
// property-svc's and booking-svc's exports as they wrote them (docs/erasure.md). Both
// services' exports are fetched whole before the answer starts, so a failed one is a 502,
// never a truncated archive.
func (a *API) export(c *fiber.Ctx) error {
	acc, err := a.liveAccount(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	recs, err := a.allAudit(ctx, acc.ID)
	if err != nil {
		return err
	}
	man := exportManifest{AccountID: acc.ID, ExportedAt: time.Now().UTC().Truncate(time.Second),
		Records: map[string][]string{"edge/account": {acc.ID}, "edge/audit": {}}}
	for _, r := range recs {
		man.Records["edge/audit"] = append(man.Records["edge/audit"], r.ID)
	}
	slices.Sort(man.Records["edge/audit"])
	var exports []serviceExport
	closeAll := func() {
		for _, e := range exports {
			_ = e.file.Close()
		}
	}
	// The temporary files are closed here on every early return, and by the stream writer
	// once it has copied them.
	streaming := false
	defer func() {
		if !streaming {
			closeAll()
		}
	}()
	for _, svc := range exported {
		e, err := a.fetchExport(ctx, svc, acc.ID)
		if err != nil {
			return serviceFailed(err)
		}
		exports = append(exports, e)
		m, err := readManifest(e)
		if err != nil {
			return serviceFailed(err)
		}
		for coll, ids := range m.Records {
			// an empty collection is an empty list, never null
			man.Records[svc+"/"+coll] = append([]string{}, slices.Sorted(slices.Values(ids))...)
		}
	}
	accJSON, err := json.MarshalIndent(exportOf(acc), "", "  ")
	if err != nil {
		return err
	}
	auditJSON, err := json.MarshalIndent(auditViews(recs), "", "  ")
	if err != nil {
		return err
	}
	manJSON, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/zip")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="account-%s.zip"`, acc.ID))
	c.Status(fiber.StatusOK)
	streaming = true
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer closeAll()
		zw := zip.NewWriter(w)
		for _, f := range []struct {
			name string
			body []byte
		}{{"manifest.json", manJSON}, {"edge/account.json", accJSON}, {"edge/audit.json", auditJSON}} {
			fw, err := zw.Create(f.name)
			if err != nil {
				return
			}
			if _, err := fw.Write(f.body); err != nil {
				return
			}
		}
		for _, e := range exports {
			for _, f := range e.zip.File {
				if err := zw.Copy(f); err != nil {
					return // the client went away: the archive stays incomplete and invalid
				}
			}
		}
		if zw.Close() == nil {
			_ = w.Flush()
		}
	})
	return nil
}

// fetchExport copies a service's export of id into a temporary file (unlinked at once: it
// goes when closed) and opens it as a zip.
func (a *API) fetchExport(ctx context.Context, service, id string) (serviceExport, error) {
	f, err := os.CreateTemp("", "vros-export-*.zip")
	if err != nil {
		return serviceExport{}, err
	}
	_ = os.Remove(f.Name())
	if err := a.services.Export(ctx, service, id, f); err != nil {
		_ = f.Close()
		return serviceExport{}, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		_ = f.Close()
		return serviceExport{}, err
	}
	zr, err := zip.NewReader(f, size)
	if err != nil {
		_ = f.Close()
		return serviceExport{}, &backend.Error{Service: service, Status: http.StatusOK, Detail: "its export is not a zip: " + err.Error()}
	}
	// Each service writes under its own folder only: no entry of it can stand in for edge's
	// or another service's.
	for _, zf := range zr.File {
		if !strings.HasPrefix(zf.Name, service+"/") || strings.Contains(zf.Name, "..") {
			_ = f.Close()
			return serviceExport{}, &backend.Error{Service: service, Status: http.StatusOK, Detail: fmt.Sprintf("its export holds %q, outside %s/", zf.Name, service)}
		}
	}
	return serviceExport{service: service, file: f, zip: zr}, nil
}

// readManifest reads <service>/manifest.json of a service's export.
func readManifest(e serviceExport) (serviceManifest, error) {
	name := e.service + "/manifest.json"
	bad := func(detail string) error {
		return &backend.Error{Service: e.service, Status: http.StatusOK, Detail: "its export's " + name + " " + detail}
	}
	f, err := e.zip.Open(name)
	if err != nil {
		return serviceManifest{}, bad("is missing")
	}
	defer f.Close()
	var m serviceManifest
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return serviceManifest{}, bad("is not valid JSON: " + err.Error())
	}
	return m, nil
}

// allAudit reads every audit record of an account, oldest first.
func (a *API) allAudit(ctx context.Context, id string) ([]account.AuditRecord, error) {
	var out []account.AuditRecord
	after := ""
	for {
		recs, err := a.accounts.Audit(ctx, account.AuditQuery{AccountID: id, After: after, Limit: 500})
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
		if len(recs) < 500 {
			break
		}
		after = recs[len(recs)-1].ID
	}
	slices.Reverse(out)
	return out, nil
}

// eraseGuest: POST /admin/v1/accounts/{id}/guests/erase {"email": "…"} → booking-svc's
// counts of the records in which that guest was anonymised. The audit record holds the
// counts only, never the address.
func (a *API) eraseGuest(c *fiber.Ctx) error {
	acc, err := a.liveAccount(c)
	if err != nil {
		return err
	}
	var v fields.Violations
	obj := fields.Parse(c.Body(), "", &v)
	email, _ := obj.Email("email", true)
	for _, k := range obj.Keys() {
		if k != "email" {
			v.Add(k, "is not a field of a guest erasure (fields: email)")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	got, err := a.services.EraseGuest(ctx, acc.ID, strings.Clone(email))
	if err != nil {
		return serviceFailed(err)
	}
	if err := a.accounts.GuestErased(ctx, acc.ID, got.Bookings, got.Users); err != nil {
		return err
	}
	return httpapi.A(c, got)
}

// getIntegrations: GET /admin/v1/accounts/{id}/integrations → the account's integration
// settings as integration-svc holds them: {"allow_private_targets": false}.
func (a *API) getIntegrations(c *fiber.Ctx) error {
	acc, err := a.liveAccount(c)
	if err != nil {
		return err
	}
	got, err := a.services.Integrations(c.UserContext(), acc.ID)
	if err != nil {
		return serviceFailed(err)
	}
	return httpapi.A(c, got)
}

// putIntegrations: PUT /admin/v1/accounts/{id}/integrations {"allow_private_targets": true}
// → the settings. allow_private_targets lets the account's webhook targets and iCal feed
// links name private addresses (docs/webhooks.md); it is off for every account unless the
// operator switches it on. A change is recorded in the audit log with the old and new value;
// one that cannot be recorded is undone.
func (a *API) putIntegrations(c *fiber.Ctx) error {
	acc, err := a.liveAccount(c)
	if err != nil {
		return err
	}
	var v fields.Violations
	obj := fields.Parse(c.Body(), "", &v)
	for _, k := range obj.Keys() {
		if k != "allow_private_targets" {
			v.Add(k, "is not an integration setting (settings: allow_private_targets)")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	// A JSON boolean only: an operator's switch takes no 1 or "yes".
	var in struct {
		Allow any `json:"allow_private_targets"`
	}
	_ = json.Unmarshal(c.Body(), &in) // an object: fields.Parse read it
	allow, ok := in.Allow.(bool)
	if !ok {
		if in.Allow == nil {
			return httpapi.InvalidField("allow_private_targets", "is required (true or false)")
		}
		return httpapi.InvalidField("allow_private_targets", "must be a boolean (true or false)")
	}
	ctx := c.UserContext()
	before, err := a.services.Integrations(ctx, acc.ID)
	if err != nil {
		return serviceFailed(err)
	}
	got, err := a.services.SetIntegrations(ctx, acc.ID, backend.Integrations{AllowPrivateTargets: allow})
	if err != nil {
		return serviceFailed(err)
	}
	if before != got {
		if err := a.accounts.IntegrationsChanged(ctx, acc.ID, "allow_private_targets", before.AllowPrivateTargets, got.AllowPrivateTargets); err != nil {
			// A change that is not in the audit log is undone, so that the operator's retry
			// makes (and records) it again rather than finding nothing left to record.
			if _, rerr := a.services.SetIntegrations(context.WithoutCancel(ctx), acc.ID, before); rerr != nil {
				return errors.Join(err, serviceFailed(rerr))
			}
			return err
		}
	}
	return httpapi.A(c, got)
}

// channels: GET /admin/v1/accounts/{id}/channels → {"account_id", "connections": [{connection_id,
// adapter, endpoint, channel, enabled, days, credentials_set, mappings, open_conflicts,
// created_at, updated_at}]}: the account's connections to channel managers as integration-svc
// holds them (docs/channels.md), never their credentials.
func (a *API) channels(c *fiber.Ctx) error {
	acc, err := a.liveAccount(c)
	if err != nil {
		return err
	}
	list, err := a.services.Channels(c.UserContext(), acc.ID)
	if err != nil {
		return serviceFailed(err)
	}
	return httpapi.A(c, fiber.Map{"account_id": acc.ID, "connections": list})
}

// deleteAccount: DELETE /admin/v1/accounts/{id} → the account id and status deleted, once
// the account is refused everywhere, its data erased in the services and its credentials
// gone (account.Service.Delete). A deletion that failed half-way is finished by the next
// DELETE or by edge's own loop.
func (a *API) deleteAccount(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("id"))
	acc, err := a.accounts.Delete(c.UserContext(), id)
	if err != nil {
		if errors.Is(err, account.ErrNotFound) {
			return notFound(err, id)
		}
		if _, ok := backend.IsServiceError(err); ok {
			e := serviceFailed(err).(*httpapi.Error)
			e.Message = fmt.Sprintf("account %s is being deleted, but %s; DELETE it again to finish (edge also retries by itself)", id, e.Message)
			return e
		}
		return err
	}
	return httpapi.A(c, fiber.Map{"account_id": acc.ID, "status": string(acc.Status), "deleted_at": acc.DeletedAt})
}

// auditViews turns records into their API form.
func auditViews(recs []account.AuditRecord) []auditView {
	out := make([]auditView, len(recs))
	for i, r := range recs {
		v := auditView{ID: r.ID, At: r.At, AccountID: r.AccountID, Action: r.Action, Credentials: r.Credentials,
			Actor: r.Fingerprint, Address: r.Address, RequestID: r.RequestID}
		for _, ch := range r.Changes {
			v.Changes = append(v.Changes, changeView(ch))
		}
		out[i] = v
	}
	return out
}

// usageReader is what the usage route reads edge's own counts from.
type usageReader interface {
	Requests(ctx context.Context, account string, from, to time.Time) (usage.Counts, error)
}
