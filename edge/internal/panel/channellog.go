package panel

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
)

// The channel log (/api/channel-log) and the conflicts (/api/channel-conflict) pages.

// The log's kinds and statuses, as the filters offer them (docs/channels.md, "Model").
var (
	logKinds    = []string{"availability", "restrictions", "rates", "revisions_feed", "ack", "reservation", "webhook", "test"}
	logStatuses = []string{"ok", "error", "retrying", "held", "conflict", "duplicate"}
)

// logPage is the entries of a page of the log.
const logPage = 50

// body is a message's body as the log answers it: a JSON string (the body as sent), or the
// body itself when it is JSON.
type body json.RawMessage

func (b *body) UnmarshalJSON(raw []byte) error {
	*b = append((*b)[:0], raw...)
	return nil
}

// Text is the body as it was sent.
func (b body) Text() string {
	raw := []byte(b)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// chanLogEntry is an entry of the channel log as /api/channel-log answers it.
type chanLogEntry struct {
	ID           num     `json:"log_id"`
	ConnectionID num     `json:"connection_id"`
	PropertyID   num     `json:"property_id"`
	Direction    string  `json:"direction"`
	Kind         string  `json:"kind"`
	Status       string  `json:"status"`
	HTTPStatus   int     `json:"http_status"`
	Request      body    `json:"request"`
	Response     body    `json:"response"`
	Truncated    bool    `json:"truncated"`
	Error        string  `json:"error"`
	At           string  `json:"at"`
	DurationMS   float64 `json:"duration_ms"`
	From         string  `json:"from"`
	To           string  `json:"to"`
	// Code is the property's internal code (the page's lookup).
	Code string `json:"-"`
}

// logQuery is the log page's filters and cursor, from its query.
type logQuery struct {
	Connection, Property, Kind, Status, From, To, Q string
	Cursor                                          int64
}

// readLogQuery reads the filters; a malformed one is refused.
func readLogQuery(get func(string) string) (logQuery, error) {
	q := logQuery{Connection: strings.TrimSpace(get("connection")), Property: strings.TrimSpace(get("property")),
		Kind: get("kind"), Status: get("status"), From: get("from"), To: get("to"), Q: strings.TrimSpace(get("q"))}
	bad := func(msg string) (logQuery, error) {
		return logQuery{}, &httpapi.Error{HTTP: fiber.StatusBadRequest, Message: msg}
	}
	for _, id := range []struct{ name, v string }{{"connection", q.Connection}, {"property", q.Property}} {
		if n, err := strconv.ParseInt(id.v, 10, 64); id.v != "" && (err != nil || n < 1) {
			return bad(id.name + " must be an id")
		}
	}
	if q.Kind != "" && !slices.Contains(logKinds, q.Kind) {
		return bad("kind must be one of " + strings.Join(logKinds, ", "))
	}
	if q.Status != "" && !slices.Contains(logStatuses, q.Status) {
		return bad("status must be one of " + strings.Join(logStatuses, ", "))
	}
	for _, d := range []struct{ name, v string }{{"from", q.From}, {"to", q.To}} {
		if _, err := time.Parse(time.DateOnly, d.v); d.v != "" && err != nil {
			return bad(d.name + " must be a date YYYY-MM-DD, such as 2027-01-31")
		}
	}
	if len(q.Q) > 100 {
		return bad("the text searched may be at most 100 characters")
	}
	if s := get("cursor"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return bad("cursor must be an entry's id")
		}
		q.Cursor = n
	}
	return q, nil
}

// values are the query's parameters (without its cursor).
func (q logQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"connection": q.Connection, "property": q.Property, "kind": q.Kind, "status": q.Status,
		"from": q.From, "to": q.To, "q": q.Q} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// filter is the /api/channel-log list's log object: the dates are whole days in UTC (to
// included).
func (q logQuery) filter(limit int) map[string]any {
	f := map[string]any{"limit": limit}
	if q.Connection != "" {
		f["connection_id"], _ = strconv.ParseInt(q.Connection, 10, 64)
	}
	if q.Property != "" {
		f["property_id"], _ = strconv.ParseInt(q.Property, 10, 64)
	}
	if q.Kind != "" {
		f["kind"] = q.Kind
	}
	if q.Status != "" {
		f["status"] = q.Status
	}
	if t, err := time.Parse(time.DateOnly, q.From); err == nil {
		f["from"] = t.UTC().Format(time.RFC3339)
	}
	if t, err := time.Parse(time.DateOnly, q.To); err == nil {
		f["to"] = t.AddDate(0, 0, 1).UTC().Format(time.RFC3339)
	}
	if q.Q != "" {
		f["q"] = q.Q
	}
	if q.Cursor > 0 {
		f["cursor"] = q.Cursor
	}
	return f
}

// propertyChoice is a property in a filter.
type propertyChoice struct{ ID, Code, Name string }

// logData is the log page's data.
type logData struct {
	Tab         string
	Q           logQuery
	Entries     []chanLogEntry
	Connections []chanConnection
	Properties  []propertyChoice
	Kinds       []string
	Statuses    []string
	// Next is the link to the older entries ("" at the end); First the newest page's, when
	// this page is not it.
	Next, First string
}

// propertyCodes reads the account's properties: the filter's choices, and the codes by id.
func (p *Panel) propertyCodes(a asker) ([]propertyChoice, map[string]string, error) {
	props, _, err := p.allProperties(a)
	if err != nil {
		return nil, nil, err
	}
	out := make([]propertyChoice, 0, len(props))
	codes := map[string]string{}
	for _, pr := range props {
		out = append(out, propertyChoice{ID: pr.PropertyID, Code: pr.InternalCode, Name: pr.Name})
		codes[pr.PropertyID] = pr.InternalCode
	}
	return out, codes, nil
}

func (p *Panel) channelLog(c *fiber.Ctx) error {
	q, err := readLogQuery(func(k string) string { return strings.Clone(c.Query(k)) })
	if err != nil {
		return err
	}
	a := askerOf(c)
	var conns struct {
		Connections []chanConnection `json:"connections"`
	}
	if err := p.mustAs(a, gateway.InterfaceA, "channel-connection", map[string]any{"action": "list"}, &conns); err != nil {
		return err
	}
	props, codes, err := p.propertyCodes(a)
	if err != nil {
		return err
	}
	var list struct {
		Entries    []chanLogEntry `json:"entries"`
		NextCursor num            `json:"next_cursor"`
	}
	if err := p.mustAs(a, gateway.InterfaceA, "channel-log", map[string]any{"action": "list", "log": q.filter(logPage)}, &list); err != nil {
		return err
	}
	for i := range list.Entries {
		list.Entries[i].Code = codes[list.Entries[i].PropertyID.String()]
	}
	slices.SortStableFunc(conns.Connections, func(x, y chanConnection) int { return int(x.ID - y.ID) })
	d := logData{Tab: "log", Q: q, Entries: list.Entries, Connections: conns.Connections, Properties: props, Kinds: logKinds, Statuses: logStatuses}
	next := int64(list.NextCursor)
	if next == 0 && len(list.Entries) == logPage {
		next = int64(list.Entries[len(list.Entries)-1].ID)
	}
	v := q.values()
	if q.Cursor > 0 {
		d.First = channelsPath + "/log?" + v.Encode()
	}
	if next > 0 {
		v.Set("cursor", strconv.FormatInt(next, 10))
		d.Next = channelsPath + "/log?" + v.Encode()
	}
	values := map[string]string{}
	for k := range q.values() {
		values[k] = q.values().Get(k)
	}
	return p.render(c, "channellog", view{Title: "Channel log", Session: sessionOf(c), Nav: "channels", Values: values, Data: d})
}

// channelLogEntry is one entry of the log, whole.
func (p *Panel) channelLogEntry(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return errNotYours
	}
	var e chanLogEntry
	if err := p.must(c, gateway.InterfaceA, "channel-log", map[string]any{"action": "get", "log": map[string]any{"log_id": id}}, &e); err != nil {
		return err
	}
	if e.PropertyID != 0 {
		_, codes, err := p.propertyCodes(askerOf(c))
		if err != nil {
			return err
		}
		e.Code = codes[e.PropertyID.String()]
	}
	if c.Query("part") == "bodies" {
		// The bodies alone: the log page loads them into an entry opened in place.
		return p.renderPart(c, "channellogentry", "bodies", e)
	}
	return p.render(c, "channellogentry", view{Title: fmt.Sprintf("Channel log entry %d", id), Session: sessionOf(c), Nav: "channels",
		Data: struct {
			Tab   string
			Entry chanLogEntry
		}{"log", e}})
}

// chanConflict is a conflict as /api/channel-conflict answers it.
type chanConflict struct {
	ID            num             `json:"conflict_id"`
	ConnectionID  num             `json:"connection_id"`
	ReservationID string          `json:"reservation_id"`
	RevisionID    string          `json:"revision_id"`
	Channel       string          `json:"channel"`
	PropertyID    num             `json:"property_id"`
	Checkin       string          `json:"checkin"`
	Checkout      string          `json:"checkout"`
	Reason        string          `json:"reason"`
	Message       string          `json:"message"`
	Nights        []string        `json:"nights"`
	BookingIDs    []num           `json:"booking_ids"`
	Guest         json.RawMessage `json:"guest"`
	GuestName     string          `json:"guest_name"`
	Total         string          `json:"total"`
	Currency      string          `json:"currency"`
	CreatedAt     string          `json:"created_at"`
	ResolvedAt    string          `json:"resolved_at"`
	Note          string          `json:"note"`
	// Code is the property's internal code (the page's lookup); Values and Errors its
	// resolve form's state.
	Code           string            `json:"-"`
	Values, Errors map[string]string `json:"-"`
}

// Name is the guest's name, whether the answer gives it as a string or an object.
func (cf chanConflict) Name() string {
	if cf.GuestName != "" {
		return cf.GuestName
	}
	var s string
	if json.Unmarshal(cf.Guest, &s) == nil {
		return s
	}
	var g struct {
		Name      string `json:"name"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	}
	if json.Unmarshal(cf.Guest, &g) == nil {
		if g.Name != "" {
			return g.Name
		}
		return strings.TrimSpace(g.FirstName + " " + g.LastName)
	}
	return ""
}

func (p *Panel) readConflicts(a asker) ([]chanConflict, error) {
	var list struct {
		Conflicts []chanConflict `json:"conflicts"`
	}
	err := p.mustAs(a, gateway.InterfaceA, "channel-conflict", map[string]any{"action": "list"}, &list)
	// Open first, in the order the service lists them.
	slices.SortStableFunc(list.Conflicts, func(x, y chanConflict) int { return boolInt(x.ResolvedAt != "") - boolInt(y.ResolvedAt != "") })
	return list.Conflicts, err
}

// conflictsData is the conflicts page's data.
type conflictsData struct {
	Tab       string
	Conflicts []chanConflict
	Open      int
}

func (p *Panel) channelConflicts(c *fiber.Ctx) error { return p.conflictsView(c, 0, nil, nil, "") }

// conflictsView draws the conflicts; id's resolve form shows values and errs.
func (p *Panel) conflictsView(c *fiber.Ctx, id int64, values, errs map[string]string, msg string) error {
	a := askerOf(c)
	list, err := p.readConflicts(a)
	if err != nil {
		return err
	}
	_, codes, err := p.propertyCodes(a)
	if err != nil {
		return err
	}
	d := conflictsData{Tab: "conflicts", Conflicts: list}
	for i := range d.Conflicts {
		cf := &d.Conflicts[i]
		cf.Code = codes[cf.PropertyID.String()]
		cf.Values, cf.Errors = map[string]string{}, nil
		if int64(cf.ID) == id {
			cf.Values, cf.Errors = values, errs
		}
		if cf.ResolvedAt == "" {
			d.Open++
		}
	}
	return p.render(c, "channelconflicts", view{Title: "Channel conflicts", Session: sessionOf(c), Nav: "channels", Notice: notice(c),
		Message: msg, Data: d})
}

// resolveConflict marks a conflict resolved with the owner's note.
func (p *Panel) resolveConflict(c *fiber.Ctx) error {
	f := postValues(c)
	id, err := strconv.ParseInt(f.Get("conflict[conflict_id]"), 10, 64)
	if err != nil || id < 1 {
		return errNotYours
	}
	note := strings.TrimSpace(f.Get("conflict[note]"))
	values := map[string]string{"conflict[note]": note}
	if len(note) > 1000 {
		c.Status(fiber.StatusBadRequest)
		return p.conflictsView(c, id, values, map[string]string{"conflict[note]": "may be at most 1000 characters"}, "Nothing was saved: correct the field marked below.")
	}
	o, err := p.call(c, gateway.InterfaceA, "channel-conflict", map[string]any{"action": "resolve", "conflict": map[string]any{"conflict_id": id, "note": note}})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error { return p.conflictsView(c, id, values, o.Violations, o.Message) })
	}
	return redirect(c, channelsPath+"/conflicts", "resolved")
}

// renderPart answers one template of page alone (a part a page loads into itself).
func (p *Panel) renderPart(c *fiber.Ctx, page, name string, data any) error {
	t, ok := p.pages[page]
	if !ok {
		return fmt.Errorf("panel: no page %q", page)
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		return fmt.Errorf("panel: render %s of %s: %w", name, page, err)
	}
	c.Type("html", "utf-8")
	return c.SendString(b.String())
}
