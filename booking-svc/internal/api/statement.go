package api

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/text/currency"

	"github.com/vros/vros/booking-svc/internal/statement"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
)

// Owner statements (docs/money.md, "Statements"): the interface A resource
// /api/owner-statement (POST /internal/a/owner-statement) and the owner's link,
// GET /internal/statements/{token}[?format=csv|pdf], mounted without the tenant check (edge
// reads it unsigned for the public page /statements/{token} and its files
// /statements/{token}/statement.{pdf,csv}, which the panel's code serves): the token is the
// capability.

// publicURLHeader is edge's public base URL (no trailing slash), sent with every request it
// forwards, so that an answer can give a whole link.
const publicURLHeader = "X-Vros-Public-URL"

// maxStatementDays bounds a statement's period (both dates included).
const maxStatementDays = 366

// SetStatements serves the owner statements with s (nil: the resource answers 503).
func (a *API) SetStatements(s *statement.Service) { a.statements = s }

// registerStatements mounts the link's route (the resource is mounted with interface A's).
func (a *API) registerStatements(app *fiber.App) {
	app.Get("/internal/statements/:token", a.statementByToken)
}

// statementHead is a statement in a list answer.
type statementHead struct {
	StatementID string    `json:"statement_id"`
	OwnerID     int64     `json:"owner_id"`
	Currency    string    `json:"currency"`
	From        string    `json:"from"`
	To          string    `json:"to"`
	Revision    int       `json:"revision"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// statementFile is a get answer in csv or pdf.
type statementFile struct {
	StatementID string `json:"statement_id"`
	Revision    int    `json:"revision"`
	Format      string `json:"format"`
	ContentType string `json:"content_type"`
	Filename    string `json:"filename"`
	File        string `json:"file"` // base64
}

// statementLink is a link answer.
type statementLink struct {
	StatementID string    `json:"statement_id"`
	URL         string    `json:"url"`
	Path        string    `json:"path"`
	PDFURL      string    `json:"pdf_url"`
	CSVURL      string    `json:"csv_url"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// ownerStatement: POST /internal/a/owner-statement, actions generate, get, list and link.
func (a *API) ownerStatement(c *fiber.Ctx) error {
	if a.statements == nil {
		return &httpapi.Error{HTTP: fiber.StatusServiceUnavailable, Type: "unavailable", Status: httpapi.StatusNotFound,
			Message: "owner statements are not served here"}
	}
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: []string{"generate", "get", "list", "link"}})
	s := o.Object("statement", action != "list")
	ctx, acct := c.UserContext(), account(c)
	switch action {
	case "generate":
		owner, _ := s.Int("owner_id", fields.Int{Required: true, Min: 1, Max: 1 << 53})
		from, okF := s.Date("from", true)
		to, okT := s.Date("to", true)
		if okF && okT {
			switch n := int(to.Sub(from).Hours()/24) + 1; {
			case n < 1:
				s.Add("to", "must not be before from")
			case n > maxStatementDays:
				s.Addf("to", "must be at most %d days after from (a period of at most %d days)", maxStatementDays-1, maxStatementDays)
			}
		}
		cur, _ := s.String("currency", fields.Str{Max: 3})
		cur = strings.ToUpper(cur)
		if cur != "" {
			if u, err := currency.ParseISO(cur); err != nil || u.String() != cur {
				s.Add("currency", "must be an ISO 4217 currency code such as EUR")
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		r, _, err := a.statements.Generate(ctx, acct, statement.Request{OwnerID: int64(owner), From: from.Format(time.DateOnly),
			To: to.Format(time.DateOnly), Currency: cur})
		var ce *statement.CurrencyError
		switch {
		case errors.As(err, &ce):
			return httpapi.InvalidField("statement.currency", ce.Error())
		case errors.Is(err, statement.ErrNoOwner):
			return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("owner %d does not exist", owner))
		case err != nil:
			return err
		}
		return httpapi.A(c, json.RawMessage(r.JSON))
	case "get":
		ref := statementRefOf(s)
		rev, _ := s.Int("revision", fields.Int{Min: 1, Max: 1 << 30})
		format, _ := s.String("format", fields.Str{OneOf: statement.Formats, IgnoreCase: true})
		if err := v.Err(); err != nil {
			return err
		}
		id, err := a.statementID(c, ref)
		if err != nil {
			return err
		}
		r, err := a.statements.Get(ctx, acct, id, rev)
		if errors.Is(err, statement.ErrNotFound) {
			return statementNotFound(id, rev)
		}
		if err != nil {
			return err
		}
		if format == "" || format == "json" {
			return httpapi.A(c, json.RawMessage(r.JSON))
		}
		f, err := statement.Render(r, format)
		if err != nil {
			return err
		}
		return httpapi.A(c, statementFile{StatementID: r.StatementID, Revision: r.Revision, Format: format, ContentType: f.ContentType,
			Filename: f.Filename, File: base64.StdEncoding.EncodeToString(f.Body)})
	case "list":
		var owner int
		if s != nil {
			owner, _ = s.Int("owner_id", fields.Int{Min: 1, Max: 1 << 53})
		}
		if err := v.Err(); err != nil {
			return err
		}
		hs, err := a.statements.List(ctx, acct, int64(owner))
		if err != nil {
			return err
		}
		out := make([]statementHead, 0, len(hs))
		for _, h := range hs {
			out = append(out, statementHead{StatementID: h.StatementID, OwnerID: h.OwnerID, Currency: h.Currency, From: h.From, To: h.To,
				Revision: h.Revision, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt})
		}
		return httpapi.A(c, fiber.Map{"statements": out})
	case "link":
		ref := statementRefOf(s)
		if err := v.Err(); err != nil {
			return err
		}
		id, err := a.statementID(c, ref)
		if err != nil {
			return err
		}
		token, l, err := a.statements.Link(ctx, acct, id)
		if errors.Is(err, statement.ErrNotFound) {
			return statementNotFound(id, 0)
		}
		if err != nil {
			return err
		}
		// c.Get's string is the request's buffer: copied before it outlives the handler.
		base := strings.Clone(strings.TrimRight(c.Get(publicURLHeader), "/"))
		path := "/statements/" + token
		return httpapi.A(c, statementLink{StatementID: id, URL: base + path, Path: path, PDFURL: base + path + "/statement.pdf",
			CSVURL: base + path + "/statement.csv", ExpiresAt: l.ExpiresAt})
	}
	return v.Err()
}

// statementRef names a statement: by statement_id, or by owner_id, from, to and currency
// (the currency may be left out when the owner has statements of that period in one).
type statementRef struct {
	id       string
	owner    int64
	from, to string
	currency string
}

// statementRefOf reads the statement a get or link names.
func statementRefOf(s *fields.Object) statementRef {
	var r statementRef
	if s == nil || s.Has("statement_id") || !s.Has("owner_id") {
		r.id, _ = s.String("statement_id", fields.Str{Required: true, Max: 100})
		return r
	}
	owner, _ := s.Int("owner_id", fields.Int{Required: true, Min: 1, Max: 1 << 53})
	from, okF := s.Date("from", true)
	to, okT := s.Date("to", true)
	cur, _ := s.String("currency", fields.Str{Max: 3})
	r.owner, r.currency = int64(owner), strings.ToUpper(cur)
	if okF && okT {
		r.from, r.to = from.Format(time.DateOnly), to.Format(time.DateOnly)
	}
	return r
}

// statementID is the id ref names: a period's statement in its currency, or in the only
// currency the owner has statements of that period in.
func (a *API) statementID(c *fiber.Ctx, ref statementRef) (string, error) {
	if ref.id != "" {
		return ref.id, nil
	}
	if ref.currency != "" {
		return statement.ID(ref.owner, ref.currency, ref.from, ref.to), nil
	}
	hs, err := a.statements.List(c.UserContext(), account(c), ref.owner)
	if err != nil {
		return "", err
	}
	var ids, curs []string
	for _, h := range hs {
		if h.From == ref.from && h.To == ref.to {
			ids, curs = append(ids, h.StatementID), append(curs, h.Currency)
		}
	}
	switch len(ids) {
	case 0:
		return "", httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("owner %d has no statement from %s to %s", ref.owner, ref.from, ref.to))
	case 1:
		return ids[0], nil
	}
	return "", httpapi.InvalidField("statement.currency", (&statement.CurrencyError{Currencies: curs}).Error())
}

func statementNotFound(id string, rev int) error {
	if rev > 0 {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("statement %q has no revision %d", id, rev))
	}
	return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("statement %q does not exist", id))
}

// statementByToken: GET /internal/statements/{token}[?format=json|csv|pdf], the statement an
// owner's link opens (its latest revision): the JSON, or the file with its type and name.
// An unknown, malformed or expired token is 404, never cached.
func (a *API) statementByToken(c *fiber.Ctx) error {
	if a.statements == nil {
		return c.SendStatus(fiber.StatusServiceUnavailable)
	}
	notFound := func() error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpapi.NotFound(httpapi.StatusNotFound, "no such statement")
	}
	format := c.Query("format", "json")
	if format != "json" && format != "csv" && format != "pdf" {
		return notFound()
	}
	r, err := a.statements.ByToken(c.UserContext(), c.Params("token"))
	if errors.Is(err, statement.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return err
	}
	f, err := statement.Render(r, format)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "private, no-cache")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set(fiber.HeaderContentType, f.ContentType)
	if format != "json" {
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+f.Filename+`"`)
	}
	return c.Send(f.Body)
}
