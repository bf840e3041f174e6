package panel

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
)

// Owner statements (docs/money.md, "Statements"): generated for an owner and a period
// through /api/owner-statement, shown, downloaded as CSV or PDF, and a link for the owner;
// and the page that link opens, public, drawn from booking-svc's read of the token.

const statementsPath = "/panel/statements"

// statementFormats are the files a statement is downloaded as, with their types.
var statementFormats = map[string]string{"pdf": "application/pdf", "csv": "text/csv; charset=utf-8"}

type statementsData struct {
	Owners     []ownerItem
	Statements []statementView
	Names      map[string]string
}

// statementData is a statement's page: the statement, and the owner's link when one was
// just made.
type statementData struct {
	S      statementView
	Link   string
	Public bool
	// Base is where its files are downloaded (the panel's, or the public link's).
	Base string
}

func (p *Panel) statementsPage(c *fiber.Ctx) error {
	now := time.Now().UTC().AddDate(0, -1, 0)
	// ?owner=N: the owner's page links here with the owner chosen.
	return p.statementsView(c, "", map[string]string{"month": now.Format("2006-01"), "statement[owner_id]": strings.Clone(c.Query("owner"))}, nil)
}

func (p *Panel) statementsView(c *fiber.Ctx, msg string, values, errs map[string]string) error {
	a := askerOf(c)
	owners, err := p.readOwners(a)
	if err != nil {
		return err
	}
	d := statementsData{Owners: owners, Names: ownerNames(owners)}
	// The statements made so far, when the resource lists them (a refusal leaves the list out).
	if o, err := p.callAs(a, gateway.InterfaceA, "owner-statement", map[string]any{"action": "list"}); err == nil && o.OK {
		_ = listOf(o.Data, &d.Statements)
		// A list names the owner by id only.
		for i, st := range d.Statements {
			if st.Owner.OwnerID == "" {
				d.Statements[i].Owner.OwnerID = st.OwnerID
			}
		}
	}
	return p.render(c, "statements", view{Title: "Owner statements", Session: sessionOf(c), Nav: "statements", Notice: notice(c),
		Message: msg, Values: values, Errors: errs, Data: d})
}

// statementRequest reads the generate form: an owner, a month (or a period from … to) and
// an optional currency.
func statementRequest(get func(string) string) (map[string]any, map[string]string) {
	errs := map[string]string{}
	st := map[string]any{}
	id, err := strconv.ParseInt(get("statement[owner_id]"), 10, 64)
	if err != nil || id < 1 {
		errs["statement[owner_id]"] = "choose an owner"
	}
	st["owner_id"] = id
	from, to := strings.TrimSpace(get("statement[from]")), strings.TrimSpace(get("statement[to]"))
	if from == "" && to == "" {
		if m := strings.TrimSpace(get("month")); m != "" {
			if from, to = monthRange(m); from == "" {
				errs["month"] = "must be a month YYYY-MM"
			}
		} else {
			errs["month"] = "choose a month, or a period from … to"
		}
	} else if from == "" || to == "" {
		errs["statement[from]"] = "give both dates of the period, or a month"
	}
	st["from"], st["to"] = from, to
	if cur := strings.ToUpper(strings.TrimSpace(get("statement[currency]"))); cur != "" {
		st["currency"] = cur
	}
	return st, nilIfEmpty(errs)
}

// generateStatement generates (or finds again) the statement of an owner and a period, and
// shows it.
func (p *Panel) generateStatement(c *fiber.Ctx) error {
	f := postValues(c)
	values := map[string]string{}
	for k := range f {
		if k != csrfField {
			values[k] = f.Get(k)
		}
	}
	st, errs := statementRequest(f.Get)
	if errs != nil {
		c.Status(fiber.StatusBadRequest)
		return p.statementsView(c, "Nothing was generated: correct the fields marked below.", values, errs)
	}
	o, err := p.call(c, gateway.InterfaceA, "owner-statement", map[string]any{"action": "generate", "statement": st})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error { return p.statementsView(c, o.Message, values, o.Violations) })
	}
	var s statementView
	if err := loose(o.Data, &s); err != nil {
		return err
	}
	if s.StatementID != "" {
		return redirect(c, statementsPath+"/"+seg(string(s.StatementID)), "")
	}
	return p.statementShow(c, s, "")
}

func statementID(c *fiber.Ctx) (string, error) {
	id := strings.Clone(c.Params("id"))
	if !tokenPattern.MatchString(id) {
		return "", errNotYours
	}
	return id, nil
}

// statementRef is the statement object of an action on one statement.
func statementRef(id string, more map[string]any) map[string]any {
	m := map[string]any{"statement_id": id}
	for k, v := range more {
		m[k] = v
	}
	return m
}

func (p *Panel) readStatement(c *fiber.Ctx, id string) (statementView, error) {
	var s statementView
	data, err := p.mustRaw(askerOf(c), gateway.InterfaceA, "owner-statement", map[string]any{"action": "get", "statement": statementRef(id, nil)})
	if err != nil {
		return s, err
	}
	err = loose(data, &s)
	if s.StatementID == "" {
		s.StatementID = text(id)
	}
	return s, err
}

func (p *Panel) statementPage(c *fiber.Ctx) error {
	id, err := statementID(c)
	if err != nil {
		return err
	}
	s, err := p.readStatement(c, id)
	if err != nil {
		return err
	}
	return p.statementShow(c, s, "")
}

func (p *Panel) statementShow(c *fiber.Ctx, s statementView, link string) error {
	d := statementData{S: s, Link: link, Base: statementsPath + "/" + seg(string(s.StatementID))}
	return p.render(c, "statement", view{Title: statementTitle(s), Session: sessionOf(c), Nav: "statements", Notice: notice(c), Data: d})
}

func statementTitle(s statementView) string {
	who := string(s.Owner.Name)
	if who == "" {
		who = "owner " + string(s.Owner.OwnerID)
	}
	return fmt.Sprintf("Statement · %s · %s to %s", who, s.From, s.To)
}

// statementFile downloads the statement as CSV or PDF (get with format: the file base64 in
// data.file).
func (p *Panel) statementFile(c *fiber.Ctx) error {
	id, err := statementID(c)
	if err != nil {
		return err
	}
	format := strings.Clone(c.Params("format"))
	ct, ok := statementFormats[format]
	if !ok {
		return errNotYours
	}
	data, err := p.mustRaw(askerOf(c), gateway.InterfaceA, "owner-statement", map[string]any{"action": "get", "statement": statementRef(id, map[string]any{"format": format})})
	if err != nil {
		return err
	}
	var f struct{ File, Filename text }
	if err := loose(data, &f); err != nil {
		return err
	}
	b, err := base64.StdEncoding.DecodeString(string(f.File))
	if err != nil {
		return fmt.Errorf("statement %s: the %s is not base64: %w", id, format, err)
	}
	return sendStatementFile(c, ct, "statement-"+id+"."+format, b)
}

func sendStatementFile(c *fiber.Ctx, ct, name string, b []byte) error {
	c.Set(fiber.HeaderContentType, ct)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	return c.Send(b)
}

// statementLink makes the link an owner reads the statement at (90 days), shown on this
// answer only: whoever has it reads the statement.
func (p *Panel) statementLink(c *fiber.Ctx) error {
	id, err := statementID(c)
	if err != nil {
		return err
	}
	data, err := p.mustRaw(askerOf(c), gateway.InterfaceA, "owner-statement", map[string]any{"action": "link", "statement": statementRef(id, nil)})
	if err != nil {
		return err
	}
	var l struct{ URL text }
	if err := loose(data, &l); err != nil {
		return err
	}
	s, err := p.readStatement(c, id)
	if err != nil {
		return err
	}
	return p.statementShow(c, s, string(l.URL))
}

// tokenPattern is a statement's id or a link's token as the paths take them.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// linkToken is the token of a public statement link: 16 to 128 URL-safe characters.
var linkToken = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// errLinkNotFound is a statement link booking-svc does not know: the same page whatever the
// reason (expired, never made, malformed), naming no account.
var errLinkNotFound = &httpapi.Error{HTTP: fiber.StatusNotFound,
	Message: "This statement link is not valid: it expired or it never existed. Ask your property manager for a new one."}

// readLink reads booking-svc's public statement read of token (format "": the JSON).
func (p *Panel) readLink(c *fiber.Ctx, token, format string) (gateway.Answer, error) {
	if !linkToken.MatchString(token) || p.cfg.Statements == nil {
		return gateway.Answer{}, errLinkNotFound
	}
	path := "/internal/statements/" + token
	if format != "" {
		path += "?format=" + format
	}
	ans, err := p.cfg.Statements(c.UserContext(), path, strings.Clone(httpapi.RequestID(c)))
	if err != nil {
		return ans, err
	}
	switch {
	case ans.Status == http.StatusNotFound:
		return ans, errLinkNotFound
	case ans.Status != http.StatusOK:
		return ans, fmt.Errorf("statement link answered HTTP %d: %.200s", ans.Status, ans.Body)
	}
	return ans, nil
}

// publicStatement is the owner's statement page: no sign-in, the token is the capability.
func (p *Panel) publicStatement(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	ans, err := p.readLink(c, token, "")
	if err != nil {
		return err
	}
	var s statementView
	raw := json.RawMessage(ans.Body)
	// The read answers the statement itself, or in an envelope's data.
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &env) == nil && len(env.Data) > 0 && env.Data[0] == '{' {
		raw = env.Data
	}
	if err := loose(raw, &s); err != nil {
		return err
	}
	c.Set("Referrer-Policy", "no-referrer")
	d := statementData{S: s, Public: true, Base: "/statements/" + token}
	return p.render(c, "statement", view{Title: statementTitle(s), Data: d})
}

// publicStatementFile downloads the linked statement as PDF or CSV.
func (p *Panel) publicStatementFile(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	format := strings.Clone(c.Params("format"))
	ct, ok := statementFormats[format]
	if !ok {
		return errLinkNotFound
	}
	ans, err := p.readLink(c, token, format)
	if err != nil {
		return err
	}
	c.Set("Referrer-Policy", "no-referrer")
	return sendStatementFile(c, ct, "statement."+format, ans.Body)
}
