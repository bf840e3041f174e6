package panel

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/vros/vros/edge/internal/gateway"
)

// The Messages pages (docs/messaging.md, "Panel"): the account's templates
// (/api/message-template) listed per trigger and language, each edited with the service's
// refusal at its field (a template's error names its line: the page shows that line of the
// source) and previewed with one of the account's bookings; the triggers
// (/api/message-trigger), the delivery log (/api/message-log), the settings
// (/api/messaging-settings, the SMTP password write-only, a test message) and the
// suppression list (/api/message-suppression). Every read and write is the resource's, as
// an API client sends it.

const messagesPath = "/panel/messages"

var (
	// msgLanguages are the languages a template may be written in (docs/messaging.md).
	msgLanguages = []string{"en", "it", "es", "fr", "de", "pt", "nl"}
	// msgStatuses are the delivery log's statuses.
	msgStatuses = []string{"scheduled", "pending", "sending", "sent", "failed", "bounced", "cancelled", "suppressed"}
	// smtpTLS are the SMTP TLS modes, the safe ones first.
	smtpTLS = []string{"starttls", "tls", "none"}
)

const (
	// previewBookings is how many of the account's bookings the preview offers.
	previewBookings = 50
	// msgLogPage is the messages of a page of the delivery log.
	msgLogPage = 50
	// maxNotify is how many notification addresses the settings take.
	maxNotify = 10
	// maxTriggers bounds the rows a triggers form is read for.
	maxTriggers = 64
)

// msgTemplate is a template as /api/message-template answers it.
type msgTemplate struct {
	TemplateID                     num
	Trigger, Language              text
	BrandID, PropertyID            num
	Subject, HTML, Text, UpdatedAt text
}

// msgTrigger is a trigger's settings as /api/message-trigger answers them.
type msgTrigger struct {
	Trigger, To, Time  text
	Enabled, Scheduled bool
	Days               num
}

// msgEntry is a message of the delivery log as /api/message-log answers it.
type msgEntry struct {
	MessageID, Trigger, To, Address, Language, Subject, Status text
	BookingID, PropertyID, Attempts, Opens                     num
	SendAt, SentAt, Answer, SMTPMessageID, CreatedAt           text
	UpdatedAt                                                  text
}

// msgSettings are the account's messaging settings as /api/messaging-settings answers
// them: the SMTP password is never answered, only whether one is set.
type msgSettings struct {
	FromName, FromAddress, ReplyTo text
	Notify                         []string
	SMTP                           *struct {
		Host, Username, TLS text
		Port                num
	}
	SMTPPasswordSet bool
}

// suppression is an address on the account's suppression list.
type suppression struct {
	Address, Reason, MessageID, Message, CreatedAt, Created text
}

// listPages bounds the pages of 100 a list of the message resources is read for.
const listPages = 20

// readAll reads every page of a list action of resource (pages of 100, at most listPages)
// into out, a pointer to a slice.
func readAll[T any](p *Panel, a asker, resource string, out *[]T) error {
	for page := 1; page <= listPages; page++ {
		data, err := p.mustRaw(a, gateway.InterfaceA, resource, map[string]any{"action": "list", "page": page, "limit": 100})
		if err != nil {
			return err
		}
		var got struct{ Total int }
		if err := loose(data, &got); err != nil {
			return err
		}
		var items []T
		if err := listOf(data, &items); err != nil {
			return err
		}
		*out = append(*out, items...)
		if len(items) < 100 || page*100 >= got.Total {
			return nil
		}
	}
	return nil
}

// readTriggers reads the account's triggers (every trigger, in the service's order).
func (p *Panel) readTriggers(a asker) ([]msgTrigger, error) {
	data, err := p.mustRaw(a, gateway.InterfaceA, "message-trigger", map[string]any{"action": "get"})
	if err != nil {
		return nil, err
	}
	var list []msgTrigger
	return list, listOf(data, &list)
}

// scopeNames are the account's brands and properties by id, for a template's scope.
type scopeNames struct {
	Brands     []scopeChoice
	Properties []scopeChoice
}

type scopeChoice struct{ ID, Name string }

func (s scopeNames) name(list []scopeChoice, id num) string {
	for _, c := range list {
		if c.ID == id.String() {
			return c.Name
		}
	}
	return id.String()
}

// Scope says which bookings a template is for.
func (s scopeNames) Scope(t msgTemplate) string {
	var parts []string
	if t.PropertyID != 0 {
		parts = append(parts, "property "+s.name(s.Properties, t.PropertyID))
	}
	if t.BrandID != 0 {
		parts = append(parts, "brand "+s.name(s.Brands, t.BrandID))
	}
	if len(parts) == 0 {
		return "every booking"
	}
	return strings.Join(parts, ", ")
}

// readScopes reads the account's brands and properties.
func (p *Panel) readScopes(a asker) (scopeNames, error) {
	var s scopeNames
	var settings accountSettings
	if err := p.mustAs(a, gateway.InterfaceA, "account-settings", map[string]any{}, &settings); err != nil {
		return s, err
	}
	for _, b := range settings.Brands {
		s.Brands = append(s.Brands, scopeChoice{ID: strconv.Itoa(b.ID), Name: b.Name})
	}
	props, _, err := p.allProperties(a)
	if err != nil {
		return s, err
	}
	for _, pr := range props {
		s.Properties = append(s.Properties, scopeChoice{ID: pr.PropertyID, Name: pr.InternalCode + " · " + pr.Name})
	}
	return s, nil
}

// templateRow is a trigger on the templates page: for each language, the account's
// templates (none: vros's default is sent).
type templateRow struct {
	Trigger msgTrigger
	Cells   []templateCell
}

type templateCell struct {
	Language  string
	Templates []msgTemplate
}

type templatesData struct {
	Tab       string
	Rows      []templateRow
	Languages []string
	Scopes    scopeNames
	// Others are templates of a trigger the service did not list (none expected).
	Others []msgTemplate
}

func (p *Panel) messagesPage(c *fiber.Ctx) error {
	a := askerOf(c)
	triggers, err := p.readTriggers(a)
	if err != nil {
		return err
	}
	var list []msgTemplate
	if err := readAll(p, a, "message-template", &list); err != nil {
		return err
	}
	scopes, err := p.readScopes(a)
	if err != nil {
		return err
	}
	d := templatesData{Tab: "templates", Languages: msgLanguages, Scopes: scopes}
	listed := map[string]bool{}
	for _, tr := range triggers {
		row := templateRow{Trigger: tr}
		listed[string(tr.Trigger)] = true
		for _, l := range msgLanguages {
			cell := templateCell{Language: l}
			for _, t := range list {
				if t.Trigger == tr.Trigger && string(t.Language) == l {
					cell.Templates = append(cell.Templates, t)
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		d.Rows = append(d.Rows, row)
	}
	for _, t := range list {
		if !listed[string(t.Trigger)] {
			d.Others = append(d.Others, t)
		}
	}
	return p.render(c, "messages", view{Title: "Messages", Session: sessionOf(c), Nav: "messages", Notice: notice(c), Data: d})
}

// templateForm is the template page's data.
type templateForm struct {
	Tab string
	// ID is the template's id ("": a new one).
	ID        string
	Triggers  []msgTrigger
	Languages []string
	Scopes    scopeNames
	Bookings  []bookingChoice
	// Lines are the source lines a violation names, by field.
	Lines map[string]*sourceLine
	// Preview is what the preview answered (nil: none asked).
	Preview *msgPreview
}

// sourceLine is the line of a template part a violation names.
type sourceLine struct {
	N    int
	Text string
}

// bookingChoice is one of the account's bookings, as the preview offers it.
type bookingChoice struct {
	ID    int64
	Label string
}

// msgPreview is what /api/message-template's preview answers.
type msgPreview struct {
	Subject, HTML, Text, Source text
	TemplateID                  num
	// BookingID is the booking it was drawn with.
	BookingID int64
}

// templateFields are the template form's fields, as the resource's template object names
// them.
var templateFields = []string{"trigger", "language", "brand_id", "property_id", "subject", "html", "text"}

func templateID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, errNotYours
	}
	return id, nil
}

// newTemplate is the form of a new template (?trigger=…&language=…).
func (p *Panel) newTemplate(c *fiber.Ctx) error {
	values := map[string]string{"template[trigger]": strings.Clone(c.Query("trigger")), "template[language]": strings.Clone(c.Query("language"))}
	if values["template[language]"] == "" {
		values["template[language]"] = "en"
	}
	return p.templateView(c, 0, templateState{values: values})
}

// editTemplate is a template's form, with its values as stored.
func (p *Panel) editTemplate(c *fiber.Ctx) error {
	id, err := templateID(c)
	if err != nil {
		return err
	}
	var t msgTemplate
	data, err := p.mustRaw(askerOf(c), gateway.InterfaceA, "message-template", map[string]any{"action": "get", "template": map[string]any{"template_id": id}})
	if err != nil {
		return err
	}
	if err := loose(data, &t); err != nil {
		return err
	}
	values := map[string]string{"template[trigger]": string(t.Trigger), "template[language]": string(t.Language),
		"template[subject]": string(t.Subject), "template[html]": string(t.HTML), "template[text]": string(t.Text)}
	if t.BrandID != 0 {
		values["template[brand_id]"] = t.BrandID.String()
	}
	if t.PropertyID != 0 {
		values["template[property_id]"] = t.PropertyID.String()
	}
	return p.templateView(c, id, templateState{values: values})
}

// templateState is a template form as the page shows it again.
type templateState struct {
	values, errs map[string]string
	msg          string
	preview      *msgPreview
}

// templateView draws the template form (id 0: a new template).
func (p *Panel) templateView(c *fiber.Ctx, id int64, st templateState) error {
	a := askerOf(c)
	triggers, err := p.readTriggers(a)
	if err != nil {
		return err
	}
	scopes, err := p.readScopes(a)
	if err != nil {
		return err
	}
	bookings, err := p.previewChoices(a)
	if err != nil {
		return err
	}
	d := templateForm{Tab: "templates", Triggers: triggers, Languages: msgLanguages, Scopes: scopes, Bookings: bookings,
		Lines: map[string]*sourceLine{}, Preview: st.preview}
	title := "New message template"
	if id > 0 {
		d.ID = strconv.FormatInt(id, 10)
		title = "Message template " + d.ID
	}
	if st.values["booking_id"] == "" && len(bookings) > 0 {
		st.values["booking_id"] = strconv.FormatInt(bookings[0].ID, 10)
	}
	for _, part := range []string{"template[subject]", "template[html]", "template[text]"} {
		if l, ok := lineOf(st.values[part], st.errs[part]); ok {
			d.Lines[part] = &l
		}
	}
	return p.render(c, "messagetemplate", view{Title: title, Session: sessionOf(c), Nav: "messages", Notice: notice(c), Message: st.msg,
		Values: st.values, Errors: st.errs, Data: d})
}

// lineNumber is the line a template's error names ("line 2: executing …").
var lineNumber = regexp.MustCompile(`\bline (\d+)\b`)

// lineOf is the line of source that msg (a violation of it) names.
func lineOf(source, msg string) (sourceLine, bool) {
	m := lineNumber.FindStringSubmatch(msg)
	if m == nil {
		return sourceLine{}, false
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(strings.ReplaceAll(source, "\r\n", "\n"), "\n")
	if n < 1 || n > len(lines) {
		return sourceLine{}, false
	}
	return sourceLine{N: n, Text: lines[n-1]}, true
}

// parseTemplate reads the template form as the resource's template object; the ids are
// checked here, the rest is the service's (Validate).
func parseTemplate(get func(string) string) (map[string]any, map[string]string) {
	errs := map[string]string{}
	t := map[string]any{}
	for _, f := range templateFields {
		v := get("template[" + f + "]")
		switch f {
		case "brand_id", "property_id":
			v = strings.TrimSpace(v)
			if v == "" {
				t[f] = 0
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				errs["template["+f+"]"] = "must be the id of one of yours, or empty for any"
				continue
			}
			t[f] = n
		case "trigger", "language", "subject":
			t[f] = strings.TrimSpace(v)
		default:
			t[f] = strings.ReplaceAll(v, "\r\n", "\n")
		}
	}
	return t, nilIfEmpty(errs)
}

// saveTemplate sends the template form: do=save creates or updates it, do=preview shows
// it, unsaved, drawn with the booking chosen.
func (p *Panel) saveTemplate(c *fiber.Ctx) error {
	var id int64
	if c.Params("id") != "" {
		var err error
		if id, err = templateID(c); err != nil {
			return err
		}
	}
	f := postValues(c)
	st := templateState{values: map[string]string{}}
	for k := range f {
		if k != csrfField && k != "do" {
			st.values[k] = f.Get(k)
		}
	}
	tpl, errs := parseTemplate(f.Get)
	if errs != nil {
		c.Status(fiber.StatusBadRequest)
		st.errs, st.msg = errs, "Nothing was saved: correct the fields marked below."
		return p.templateView(c, id, st)
	}
	if f.Get("do") == "preview" {
		booking, err := strconv.ParseInt(strings.TrimSpace(f.Get("booking_id")), 10, 64)
		if err != nil || booking < 1 {
			c.Status(fiber.StatusBadRequest)
			st.errs = map[string]string{"booking_id": "choose one of your bookings"}
			return p.templateView(c, id, st)
		}
		o, err := p.call(c, gateway.InterfaceA, "message-template", map[string]any{"action": "preview", "booking_id": booking, "template": tpl})
		if err != nil {
			return err
		}
		if !o.OK {
			return refused(c, o, func() error {
				st.msg, st.errs = o.Message, o.Violations
				return p.templateView(c, id, st)
			})
		}
		var pv msgPreview
		if err := loose(o.Data, &pv); err != nil {
			return err
		}
		// The template as typed: neither the account's saved one nor the default.
		pv.BookingID, pv.Source, pv.TemplateID = booking, "", 0
		st.preview = &pv
		c.Set("Content-Security-Policy", previewCSP(string(pv.HTML)))
		return p.templateView(c, id, st)
	}
	action := "create"
	if id > 0 {
		action, tpl["template_id"] = "update", id
	}
	o, err := p.call(c, gateway.InterfaceA, "message-template", map[string]any{"action": action, "template": tpl})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			st.msg, st.errs = o.Message, o.Violations
			if st.msg == "" || len(st.errs) > 0 {
				st.msg = "Nothing was saved: " + strings.TrimSuffix(firstNonEmpty(o.Message, "the service refused it"), ".") + "."
			}
			return p.templateView(c, id, st)
		})
	}
	if id == 0 {
		var made msgTemplate
		if err := loose(o.Data, &made); err != nil {
			return err
		}
		if made.TemplateID == 0 {
			return redirect(c, messagesPath, "created")
		}
		return redirect(c, fmt.Sprintf("%s/templates/%d", messagesPath, made.TemplateID), "created")
	}
	return redirect(c, fmt.Sprintf("%s/templates/%d", messagesPath, id), "saved")
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// deleteTemplate deletes a template: vros's default (or a wider template of the account's)
// is sent in its place.
func (p *Panel) deleteTemplate(c *fiber.Ctx) error {
	id, err := templateID(c)
	if err != nil {
		return err
	}
	o, err := p.call(c, gateway.InterfaceA, "message-template", map[string]any{"action": "delete", "template": map[string]any{"template_id": id}})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error { return p.templateView(c, id, templateState{values: map[string]string{}, msg: o.Message}) })
	}
	return redirect(c, messagesPath, "deleted")
}

// previewChoices are the account's bookings the preview offers (the first page of
// listbooking).
func (p *Panel) previewChoices(a asker) ([]bookingChoice, error) {
	var list struct {
		ListBooking []bookingItem `json:"listBooking"`
	}
	if err := p.mustAs(a, gateway.InterfaceB, "listbooking", map[string]any{"page": 1, "limit": previewBookings}, &list); err != nil {
		return nil, err
	}
	out := make([]bookingChoice, 0, len(list.ListBooking))
	for _, b := range list.ListBooking {
		label := fmt.Sprintf("%d · %s · %s · %s to %s", b.BookingID, strings.TrimSpace(b.FirstName+" "+b.LastName), b.PropertyName, b.Checkin, b.Checkout)
		if b.CancellationDate != nil {
			label += " · cancelled"
		}
		out = append(out, bookingChoice{ID: b.BookingID, Label: label})
	}
	return out, nil
}

// previewData is the preview page's data.
type previewData struct {
	Tab       string
	Triggers  []msgTrigger
	Languages []string
	Bookings  []bookingChoice
	Preview   *msgPreview
}

// previewPage draws the message a trigger would send in a language (the template Choose
// picks: the account's or vros's default) for one of the account's bookings, or a saved
// template's (?template_id=).
func (p *Panel) previewPage(c *fiber.Ctx) error {
	a := askerOf(c)
	triggers, err := p.readTriggers(a)
	if err != nil {
		return err
	}
	bookings, err := p.previewChoices(a)
	if err != nil {
		return err
	}
	values := map[string]string{}
	for _, k := range []string{"trigger", "language", "booking_id", "template_id"} {
		values[k] = strings.TrimSpace(strings.Clone(c.Query(k)))
	}
	if values["language"] == "" {
		values["language"] = "en"
	}
	if values["booking_id"] == "" && len(bookings) > 0 {
		values["booking_id"] = strconv.FormatInt(bookings[0].ID, 10)
	}
	d := previewData{Tab: "templates", Triggers: triggers, Languages: msgLanguages, Bookings: bookings}
	v := view{Title: "Message preview", Session: sessionOf(c), Nav: "messages", Values: values, Data: &d}
	errs := map[string]string{}
	booking, err := strconv.ParseInt(values["booking_id"], 10, 64)
	if err != nil || booking < 1 {
		if values["booking_id"] != "" {
			errs["booking_id"] = "must be the id of one of your bookings"
		} else {
			v.Message = "A preview is drawn with one of your bookings, and there is none yet."
		}
	}
	body := map[string]any{"action": "preview", "booking_id": booking}
	if s := values["template_id"]; s != "" {
		tid, err := strconv.ParseInt(s, 10, 64)
		if err != nil || tid < 1 {
			return errNotYours
		}
		body["template_id"] = tid
	} else {
		if values["trigger"] == "" && len(triggers) > 0 {
			values["trigger"] = string(triggers[0].Trigger)
		}
		if !slices.Contains(msgLanguages, values["language"]) {
			errs["language"] = "must be one of " + strings.Join(msgLanguages, ", ")
		}
		body["trigger"], body["language"] = values["trigger"], values["language"]
	}
	if len(errs) > 0 || v.Message != "" {
		if len(errs) > 0 {
			c.Status(fiber.StatusBadRequest)
			v.Errors = errs
		}
		return p.render(c, "messagepreview", v)
	}
	o, err := p.call(c, gateway.InterfaceA, "message-template", body)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			v.Message, v.Errors = o.Message, o.Violations
			return p.render(c, "messagepreview", v)
		})
	}
	var pv msgPreview
	if err := loose(o.Data, &pv); err != nil {
		return err
	}
	pv.BookingID = booking
	d.Preview = &pv
	c.Set("Content-Security-Policy", previewCSP(string(pv.HTML)))
	return p.render(c, "messagepreview", v)
}

// triggersData is the triggers page's data.
type triggersData struct {
	Tab      string
	Triggers []msgTrigger
}

func (p *Panel) triggersPage(c *fiber.Ctx) error {
	return p.triggersView(c, nil, nil, "")
}

// triggersView draws the triggers form: values nil shows the settings as stored.
func (p *Panel) triggersView(c *fiber.Ctx, values, errs map[string]string, msg string) error {
	list, err := p.readTriggers(askerOf(c))
	if err != nil {
		return err
	}
	if values == nil {
		values = map[string]string{}
		for i, t := range list {
			k := fmt.Sprintf("triggers[%d]", i)
			if t.Enabled {
				values[k+"[enabled]"] = "1"
			}
			if t.Scheduled {
				values[k+"[days]"] = t.Days.String()
				values[k+"[time]"] = string(t.Time)
			}
		}
	}
	return p.render(c, "messagetriggers", view{Title: "Message triggers", Session: sessionOf(c), Nav: "messages", Notice: notice(c),
		Message: msg, Values: values, Errors: errs, Data: triggersData{Tab: "triggers", Triggers: list}})
}

// parseTriggers reads the triggers form as /api/message-trigger's triggers: each row's
// trigger, whether it is on, and a scheduled one's days and time.
func parseTriggers(get func(string) string) ([]map[string]any, map[string]string) {
	errs := map[string]string{}
	var out []map[string]any
	for i := range maxTriggers {
		k := fmt.Sprintf("triggers[%d]", i)
		name := strings.TrimSpace(get(k + "[trigger]"))
		if name == "" {
			break
		}
		t := map[string]any{"trigger": name, "enabled": get(k+"[enabled]") == "1"}
		if get(k+"[scheduled]") == "1" {
			days, err := strconv.Atoi(strings.TrimSpace(get(k + "[days]")))
			if err != nil {
				errs[k+"[days]"] = "must be a whole number of days"
			}
			t["days"], t["time"] = days, strings.TrimSpace(get(k+"[time]"))
		}
		out = append(out, t)
	}
	return out, nilIfEmpty(errs)
}

// triggerViolations places the service's violations at the rows' fields: a path of the
// form (triggers[2].days) or of a trigger by its name (stay.arrival.days); any other is
// said above the form.
func triggerViolations(o outcome, rows []map[string]any) (map[string]string, []string) {
	errs := map[string]string{}
	var rest []string
	for _, d := range o.Details {
		field, msg, _ := strings.Cut(d, ": ")
		if strings.HasPrefix(field, "triggers[") {
			errs[bracket(field)] = msg
			continue
		}
		field = strings.TrimPrefix(field, "triggers.")
		placed := false
		for i, r := range rows {
			name, _ := r["trigger"].(string)
			if member, ok := strings.CutPrefix(field, name+"."); ok && name != "" {
				errs[fmt.Sprintf("triggers[%d][%s]", i, member)] = msg
				placed = true
				break
			}
		}
		if !placed {
			rest = append(rest, d)
		}
	}
	return nilIfEmpty(errs), rest
}

// saveTriggers sends the triggers form: the service re-plans the account's bookings.
func (p *Panel) saveTriggers(c *fiber.Ctx) error {
	f := postValues(c)
	values := map[string]string{}
	for k := range f {
		if k != csrfField {
			values[k] = f.Get(k)
		}
	}
	rows, errs := parseTriggers(f.Get)
	if errs != nil {
		c.Status(fiber.StatusBadRequest)
		return p.triggersView(c, values, errs, "Nothing was saved: correct the fields marked below.")
	}
	o, err := p.call(c, gateway.InterfaceA, "message-trigger", map[string]any{"action": "update", "triggers": rows})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			errs, rest := triggerViolations(o, rows)
			msg := o.Message
			if len(rest) > 0 {
				msg = strings.TrimSuffix(msg, ".") + ": " + strings.Join(rest, "; ")
			}
			return p.triggersView(c, values, errs, msg)
		})
	}
	return redirect(c, messagesPath+"/triggers", "saved")
}

// msgLogQuery is the delivery log's filters and page, from its query.
type msgLogQuery struct {
	BookingID, Trigger, Status, Address string
	Page                                int
}

func readMsgLogQuery(get func(string) string) (msgLogQuery, map[string]string) {
	q := msgLogQuery{BookingID: strings.TrimSpace(get("booking_id")), Trigger: strings.TrimSpace(get("trigger")),
		Status: strings.TrimSpace(get("status")), Address: strings.TrimSpace(get("address")), Page: 1}
	errs := map[string]string{}
	if n, err := strconv.ParseInt(q.BookingID, 10, 64); q.BookingID != "" && (err != nil || n < 1) {
		errs["booking_id"] = "must be a booking's id"
	}
	if q.Status != "" && !slices.Contains(msgStatuses, q.Status) {
		errs["status"] = "must be one of " + strings.Join(msgStatuses, ", ")
	}
	if len(q.Address) > 320 {
		errs["address"] = "may be at most 320 characters"
	}
	if s := get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			errs["page"] = "must be a page number"
		}
		q.Page = n
	}
	return q, nilIfEmpty(errs)
}

// values are the query's filters (without its page).
func (q msgLogQuery) values() map[string]string {
	m := map[string]string{}
	for k, v := range map[string]string{"booking_id": q.BookingID, "trigger": q.Trigger, "status": q.Status, "address": q.Address} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// body is the /api/message-log list asked for.
func (q msgLogQuery) body() map[string]any {
	b := map[string]any{"action": "list", "page": q.Page, "limit": msgLogPage}
	if n, err := strconv.ParseInt(q.BookingID, 10, 64); err == nil {
		b["booking_id"] = n
	}
	for k, v := range map[string]string{"trigger": q.Trigger, "status": q.Status, "address": q.Address} {
		if v != "" {
			b[k] = v
		}
	}
	return b
}

// link is the log's page n with the query's filters.
func (q msgLogQuery) link(n int) string {
	v := q.values()
	parts := make([]string, 0, len(v)+1)
	for _, k := range []string{"booking_id", "trigger", "status", "address"} {
		if s, ok := v[k]; ok {
			parts = append(parts, k+"="+url.QueryEscape(s))
		}
	}
	parts = append(parts, "page="+strconv.Itoa(n))
	return messagesPath + "/log?" + strings.Join(parts, "&")
}

// msgLogData is the delivery log page's data.
type msgLogData struct {
	Tab      string
	Q        msgLogQuery
	Messages []msgEntry
	Total    int64
	Triggers []msgTrigger
	Statuses []string
	// Prev and Next are the links to the pages beside this one ("" none).
	Prev, Next string
}

func (p *Panel) messageLog(c *fiber.Ctx) error {
	q, errs := readMsgLogQuery(func(k string) string { return strings.Clone(c.Query(k)) })
	a := askerOf(c)
	triggers, err := p.readTriggers(a)
	if err != nil {
		return err
	}
	d := msgLogData{Tab: "log", Q: q, Triggers: triggers, Statuses: msgStatuses}
	v := view{Title: "Delivery log", Session: sessionOf(c), Nav: "messages", Values: q.values(), Errors: errs, Data: &d}
	if errs != nil {
		c.Status(fiber.StatusBadRequest)
		return p.render(c, "messagelog", v)
	}
	o, err := p.call(c, gateway.InterfaceA, "message-log", q.body())
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			v.Message, v.Errors = o.Message, o.Violations
			return p.render(c, "messagelog", v)
		})
	}
	var list struct {
		Total    int64
		Messages []msgEntry
	}
	if err := loose(o.Data, &list); err != nil {
		return err
	}
	d.Messages, d.Total = list.Messages, list.Total
	if q.Page > 1 {
		d.Prev = q.link(q.Page - 1)
	}
	if int64(q.Page)*msgLogPage < d.Total {
		d.Next = q.link(q.Page + 1)
	}
	return p.render(c, "messagelog", v)
}

// messageEntry is one message of the log, whole (?id=: a message's id holds colons).
func (p *Panel) messageEntry(c *fiber.Ctx) error {
	id := strings.Clone(c.Query("id"))
	if id == "" || len(id) > 500 {
		return errNotYours
	}
	var m msgEntry
	data, err := p.mustRaw(askerOf(c), gateway.InterfaceA, "message-log", map[string]any{"action": "get", "message_id": id})
	if err != nil {
		return err
	}
	if err := loose(data, &m); err != nil {
		return err
	}
	return p.render(c, "messageentry", view{Title: "Message", Session: sessionOf(c), Nav: "messages",
		Data: struct {
			Tab     string
			Message msgEntry
		}{"log", m}})
}

// settingsData is the settings page's data.
type settingsData struct {
	Tab         string
	PasswordSet bool
	TLSModes    []string
	// Tested is the test message's outcome, when one was just sent.
	Tested *testOutcome
}

type testOutcome struct {
	OK     bool
	Answer string
}

func (p *Panel) settingsPage(c *fiber.Ctx) error { return p.settingsView(c, settingsState{}) }

// readMsgSettings reads the account's messaging settings.
func (p *Panel) readMsgSettings(a asker) (msgSettings, error) {
	var s msgSettings
	data, err := p.mustRaw(a, gateway.InterfaceA, "messaging-settings", map[string]any{"action": "get"})
	if err != nil {
		return s, err
	}
	return s, loose(data, &s)
}

// settingsState is the settings page as a form sent shows it again.
type settingsState struct {
	// values nil: the settings as stored.
	values, errs map[string]string
	msg          string
	// testAddr is the test form's address; tested its outcome.
	testAddr string
	tested   *testOutcome
}

// settingsView draws the settings form. The SMTP password is never drawn into the page.
func (p *Panel) settingsView(c *fiber.Ctx, st settingsState) error {
	s, err := p.readMsgSettings(askerOf(c))
	if err != nil {
		return err
	}
	values := st.values
	if values == nil {
		values = map[string]string{"from_name": string(s.FromName), "from_address": string(s.FromAddress),
			"reply_to": string(s.ReplyTo), "notify": strings.Join(s.Notify, "\n"), "smtp_mode": "default", "smtp[tls]": "starttls"}
		if s.SMTP != nil && s.SMTP.Host != "" {
			values["smtp_mode"] = "own"
			values["smtp[host]"], values["smtp[username]"] = string(s.SMTP.Host), string(s.SMTP.Username)
			values["smtp[tls]"] = string(s.SMTP.TLS)
			if s.SMTP.Port != 0 {
				values["smtp[port]"] = s.SMTP.Port.String()
			}
		}
	}
	delete(values, "smtp[password]")
	if st.testAddr != "" {
		values["test[address]"] = st.testAddr
	}
	return p.render(c, "messagesettings", view{Title: "Messaging settings", Session: sessionOf(c), Nav: "messages", Notice: notice(c),
		Message: st.msg, Values: values, Errors: st.errs, Data: settingsData{Tab: "settings", PasswordSet: s.SMTPPasswordSet, TLSModes: smtpTLS, Tested: st.tested}})
}

// parseMsgSettings reads the settings form as /api/messaging-settings' update: the
// notification addresses one a line; the account's own SMTP server, or null for the
// operator's; the password sent only when typed (kept when not), "" when cleared.
func parseMsgSettings(get func(string) string) (map[string]any, map[string]string) {
	errs := map[string]string{}
	s := map[string]any{}
	for _, k := range []string{"from_name", "from_address", "reply_to"} {
		s[k] = strings.TrimSpace(get(k))
	}
	notify := []string{}
	for _, l := range strings.Split(get("notify"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			notify = append(notify, l)
		}
	}
	if len(notify) > maxNotify {
		errs["notify"] = fmt.Sprintf("may list at most %d addresses", maxNotify)
	}
	s["notify"] = notify
	switch get("smtp_mode") {
	case "own":
		smtp := map[string]any{"host": strings.TrimSpace(get("smtp[host]")), "username": strings.TrimSpace(get("smtp[username]")),
			"tls": get("smtp[tls]")}
		if smtp["host"] == "" {
			errs["smtp[host]"] = "is required for your own server"
		}
		port, err := strconv.Atoi(strings.TrimSpace(get("smtp[port]")))
		if err != nil || port < 1 || port > 65535 {
			errs["smtp[port]"] = "must be a port number, such as 587"
		}
		smtp["port"] = port
		if !slices.Contains(smtpTLS, smtp["tls"].(string)) {
			errs["smtp[tls]"] = "must be one of " + strings.Join(smtpTLS, ", ")
		}
		if pw := get("smtp[password]"); pw != "" {
			smtp["password"] = pw
		} else if get("clear_password") == "1" {
			smtp["password"] = ""
		}
		s["smtp"] = smtp
	default:
		s["smtp"] = nil
	}
	return s, nilIfEmpty(errs)
}

// settingsViolations places a violation of one of the notification addresses (notify[2])
// at the addresses' field.
func settingsViolations(errs map[string]string) map[string]string {
	for k, v := range errs {
		if rest, ok := strings.CutPrefix(k, "notify["); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(rest, "]"))
			errs["notify"] = fmt.Sprintf("address %d: %s", n+1, v)
			delete(errs, k)
		}
	}
	return errs
}

func (p *Panel) saveSettings(c *fiber.Ctx) error {
	f := postValues(c)
	values := map[string]string{}
	for k := range f {
		if k != csrfField {
			values[k] = f.Get(k)
		}
	}
	s, errs := parseMsgSettings(f.Get)
	if errs != nil {
		c.Status(fiber.StatusBadRequest)
		return p.settingsView(c, settingsState{values: values, errs: errs, msg: "Nothing was saved: correct the fields marked below."})
	}
	s["action"] = "update"
	o, err := p.call(c, gateway.InterfaceA, "messaging-settings", s)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			return p.settingsView(c, settingsState{values: values, errs: settingsViolations(o.Violations), msg: o.Message})
		})
	}
	return redirect(c, messagesPath+"/settings", "saved")
}

// testSettings sends a test message through the account's transport now and shows the
// provider's answer or the error.
func (p *Panel) testSettings(c *fiber.Ctx) error {
	addr := strings.TrimSpace(postValues(c).Get("test[address]"))
	if addr == "" {
		c.Status(fiber.StatusBadRequest)
		return p.settingsView(c, settingsState{errs: map[string]string{"test[address]": "is required"}})
	}
	o, err := p.call(c, gateway.InterfaceA, "messaging-settings", map[string]any{"action": "test", "address": addr})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			errs := map[string]string{}
			for k, v := range o.Violations {
				errs["test["+k+"]"] = v
			}
			if len(errs) == 0 {
				// Refused as a whole (no transport works): the answer is the outcome.
				return p.settingsView(c, settingsState{testAddr: addr, tested: &testOutcome{Answer: o.Message}})
			}
			return p.settingsView(c, settingsState{testAddr: addr, errs: errs, msg: o.Message})
		})
	}
	var ans struct {
		OK, Sent      *bool
		Answer, Error text
	}
	if err := loose(o.Data, &ans); err != nil {
		return err
	}
	t := &testOutcome{OK: ans.Error == "" && (ans.OK == nil || *ans.OK) && (ans.Sent == nil || *ans.Sent), Answer: string(ans.Answer)}
	if !t.OK {
		t.Answer = firstNonEmpty(string(ans.Error), string(ans.Answer))
	}
	return p.settingsView(c, settingsState{testAddr: addr, tested: t})
}

// suppressionsData is the suppression list page's data.
type suppressionsData struct {
	Tab          string
	Suppressions []suppression
}

func (p *Panel) suppressionsPage(c *fiber.Ctx) error { return p.suppressionsView(c, "") }

func (p *Panel) suppressionsView(c *fiber.Ctx, msg string) error {
	var list []suppression
	if err := readAll(p, askerOf(c), "message-suppression", &list); err != nil {
		return err
	}
	return p.render(c, "messagesuppressions", view{Title: "Suppressed addresses", Session: sessionOf(c), Nav: "messages", Notice: notice(c),
		Message: msg, Data: suppressionsData{Tab: "suppressions", Suppressions: list}})
}

// removeSuppression takes an address off the suppression list: mail to it is sent again.
func (p *Panel) removeSuppression(c *fiber.Ctx) error {
	addr := strings.TrimSpace(postValues(c).Get("address"))
	if addr == "" {
		return errNotYours
	}
	o, err := p.call(c, gateway.InterfaceA, "message-suppression", map[string]any{"action": "delete", "address": addr})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error { return p.suppressionsView(c, o.Message) })
	}
	return redirect(c, messagesPath+"/suppressions", "unsuppressed")
}

func init() {
	// list: a list of strings made in a template.
	funcs["list"] = func(s ...string) []string { return s }
}

// maxPreviewStyles bounds the styles a preview's policy allows (each a hash in the header).
const maxPreviewStyles = 100

// previewCSP is the panel's policy for a page showing doc in a sandboxed srcdoc frame. The
// frame takes the page's policy, which allows no inline style: the preview's own styles
// (its style elements and attributes, as a mail client draws them) are allowed by their
// SHA-256 each ('unsafe-hashes' for the attributes), and nothing else is. Scripts stay
// refused twice (the policy, and the frame's sandbox); remote images are not fetched.
func previewCSP(doc string) string {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return pageCSP
	}
	seen := map[string]bool{}
	var hashes []string
	add := func(s string) {
		sum := sha256.Sum256([]byte(s))
		h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !seen[h] && len(hashes) < maxPreviewStyles {
			seen[h] = true
			hashes = append(hashes, h)
		}
	}
	attrs := false
	for n := range root.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		if n.DataAtom == atom.Style {
			var b strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			}
			add(b.String())
		}
		for _, a := range n.Attr {
			if a.Namespace == "" && a.Key == "style" {
				add(a.Val)
				attrs = true
			}
		}
	}
	if len(hashes) == 0 {
		return pageCSP
	}
	src := "style-src 'self' "
	if attrs {
		src += "'unsafe-hashes' "
	}
	return strings.Replace(pageCSP, "style-src 'self'", src+strings.Join(hashes, " "), 1)
}
