package panel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/events/contract"
)

// The Channels pages (docs/channels.md, docs/panel.md "Channels"): an account's
// connections to a channel manager through /api/channel-connection, the mapping of its
// properties and rate plans to the channel manager's ids through /api/channel-mapping, the
// channel log (/api/channel-log) and the reservations that could not be applied
// (/api/channel-conflict). The forms' fields are named after the resources' JSON paths
// (connection[credentials][api_key], mapping[rate_plans][1][remote_rate_plan_id]), so each
// violation the service answers is shown at its field.

const channelsPath = "/panel/channels"

// The adapters and their credentials, as the connection form offers them.
var (
	channelAdapters = []string{"channex", "opentravel"}
	// adapterCredentials are the credentials' fields of each adapter (docs/channels.md,
	// "Model"): only the chosen adapter's are sent.
	adapterCredentials = map[string][]string{"channex": {"api_key"}, "opentravel": {"username", "password"}}
)

// num is an id or a count as the A resources answer it: a JSON number or a numeric string.
type num int64

func (n *num) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if len(b) == 0 || string(b) == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("not an id: %s", b)
	}
	*n = num(v)
	return nil
}

func (n num) String() string { return strconv.FormatInt(int64(n), 10) }

// chanConnection is a connection as /api/channel-connection answers it (the credentials are
// never answered).
type chanConnection struct {
	ID           num    `json:"connection_id"`
	Adapter      string `json:"adapter"`
	Endpoint     string `json:"endpoint"`
	Channel      string `json:"channel"`
	Enabled      bool   `json:"enabled"`
	Days         int    `json:"days"`
	InboundToken string `json:"inbound_token"`
	InboundURL   string `json:"inbound_url"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	// Mapped is the number of its mappings (enabled or not), Open of its open conflicts.
	Mapped int `json:"mappings"`
	Open   int `json:"open_conflicts"`
}

// chanPlan is one mapped rate plan.
type chanPlan struct {
	RatePlanID       num    `json:"rate_plan_id"`
	RemoteRatePlanID string `json:"remote_rate_plan_id"`
}

// chanMapping is a mapping as /api/channel-mapping answers it.
type chanMapping struct {
	ConnectionID     num        `json:"connection_id"`
	PropertyID       num        `json:"property_id"`
	InternalCode     string     `json:"internal_code"`
	RemotePropertyID string     `json:"remote_property_id"`
	RoomTypeID       string     `json:"room_type_id"`
	RatePlans        []chanPlan `json:"rate_plans"`
	Enabled          bool       `json:"enabled"`
	UpdatedAt        string     `json:"updated_at"`
}

// remote is the channel manager's id of plan ("" when not mapped).
func (m *chanMapping) remote(plan int64) string {
	if m == nil {
		return ""
	}
	for _, p := range m.RatePlans {
		if int64(p.RatePlanID) == plan {
			return p.RemoteRatePlanID
		}
	}
	return ""
}

// connectionRef is the connection object of an action on one connection.
func connectionRef(id int64, more map[string]any) map[string]any {
	m := map[string]any{"connection_id": id}
	for k, v := range more {
		m[k] = v
	}
	return m
}

// readConnections reads the account's connections (each with the count of its mappings and
// of its open conflicts, as the list answers them).
func (p *Panel) readConnections(a asker) ([]chanConnection, error) {
	var list struct {
		Connections []chanConnection `json:"connections"`
	}
	if err := p.mustAs(a, gateway.InterfaceA, "channel-connection", map[string]any{"action": "list"}, &list); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Connections, func(x, y chanConnection) int { return int(x.ID - y.ID) })
	return list.Connections, nil
}

func (p *Panel) readMappings(a asker, connection int64) ([]chanMapping, error) {
	var list struct {
		Mappings []chanMapping `json:"mappings"`
	}
	err := p.mustAs(a, gateway.InterfaceA, "channel-mapping", map[string]any{"action": "list", "mapping": map[string]any{"connection_id": connection}}, &list)
	return list.Mappings, err
}

// channelsData is the connections page's data.
type channelsData struct {
	Tab         string
	Connections []chanConnection
	Adapters    []string
	// EditID is the connection the form edits (0: the form makes a new one); DeleteID the
	// connection whose deletion is asked to be confirmed.
	EditID, DeleteID int64
	Deleting         *chanConnection
	// Shown is a connection whose inbound URL was just made (create, rotate_token): shown
	// this once.
	Shown *chanConnection
	// Tested is the answer of a connection's test.
	Tested *testAnswer
}

// testAnswer is what a connection's test answered.
type testAnswer struct {
	ID      int64
	OK      bool
	Message string
}

// connForm is the state of the connections page: a form sent (nil values: the stored ones).
type connForm struct {
	values, errs     map[string]string
	msg              string
	editID, deleteID int64
	shown            *chanConnection
	tested           *testAnswer
}

func (p *Panel) channelsPage(c *fiber.Ctx) error {
	st := connForm{}
	st.editID, _ = strconv.ParseInt(c.Query("edit"), 10, 64)
	st.deleteID, _ = strconv.ParseInt(c.Query("delete"), 10, 64)
	return p.channelsView(c, st)
}

// channelsView draws the connections page.
func (p *Panel) channelsView(c *fiber.Ctx, st connForm) error {
	conns, err := p.readConnections(askerOf(c))
	if err != nil {
		return err
	}
	d := channelsData{Tab: "connections", Connections: conns, Adapters: channelAdapters, EditID: max(st.editID, 0),
		DeleteID: max(st.deleteID, 0), Shown: st.shown, Tested: st.tested}
	values := map[string]string{"connection[adapter]": "channex", "connection[days]": "500"}
	var editing *chanConnection
	for i := range conns {
		switch conns[i].ID {
		case num(d.EditID):
			editing = &conns[i]
		}
		if conns[i].ID == num(d.DeleteID) {
			d.Deleting = &conns[i]
		}
	}
	if (d.EditID != 0 && editing == nil || d.DeleteID != 0 && d.Deleting == nil) && st.values == nil {
		return errNotYours
	}
	if editing != nil {
		values = map[string]string{"connection[connection_id]": editing.ID.String(), "connection[adapter]": editing.Adapter,
			"connection[endpoint]": editing.Endpoint, "connection[channel]": editing.Channel, "connection[days]": strconv.Itoa(editing.Days)}
	}
	if st.values != nil {
		values = st.values
		// Secrets typed are never drawn back into the page.
		for _, fields := range adapterCredentials {
			for _, f := range fields {
				delete(values, "connection[credentials]["+f+"]")
			}
		}
	}
	return p.render(c, "channels", view{Title: "Channels", Session: sessionOf(c), Nav: "channels", Notice: notice(c),
		Message: st.msg, Values: values, Errors: st.errs, Data: d})
}

// parseConnection reads the connection form: the /api/channel-connection connection object
// (create: adapter, endpoint, channel, days, credentials; update: the same but the adapter,
// with credentials only when typed), or the violations by field.
func parseConnection(get func(string) string, update bool) (map[string]any, map[string]string) {
	errs := map[string]string{}
	conn := map[string]any{}
	adapter := strings.TrimSpace(get("connection[adapter]"))
	if !update {
		if !slices.Contains(channelAdapters, adapter) {
			errs["connection[adapter]"] = "must be one of " + strings.Join(channelAdapters, ", ")
		}
		conn["adapter"] = adapter
	}
	conn["endpoint"] = strings.TrimSpace(get("connection[endpoint]"))
	// Left empty: the adapter's name for a new connection, kept as it is by an update.
	if ch := strings.TrimSpace(get("connection[channel]")); ch != "" {
		conn["channel"] = ch
	}
	if s := strings.TrimSpace(get("connection[days]")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 730 {
			errs["connection[days]"] = "must be a whole number of days from 1 to 730"
		}
		conn["days"] = n
	}
	creds := map[string]any{}
	for _, f := range adapterCredentials[adapter] {
		if v := get("connection[credentials][" + f + "]"); v != "" {
			creds[f] = v
		} else if !update {
			errs["connection[credentials]["+f+"]"] = "is required"
		}
	}
	if len(creds) > 0 {
		conn["credentials"] = creds
	}
	if update {
		id, err := strconv.ParseInt(get("connection[connection_id]"), 10, 64)
		if err != nil || id < 1 {
			errs["connection[connection_id]"] = "must be the id of a connection"
		}
		conn["connection_id"] = id
	}
	return conn, nilIfEmpty(errs)
}

// channelAction sends the connections page's forms (do: create, update, enable, disable,
// delete, rotate_token, test).
func (p *Panel) channelAction(c *fiber.Ctx) error {
	f := postValues(c)
	do := f.Get("do")
	get := func(k string) string { return f.Get(k) }
	st := connForm{values: map[string]string{}}
	for k := range f {
		if k != csrfField {
			st.values[k] = f.Get(k)
		}
	}
	id, _ := strconv.ParseInt(f.Get("connection[connection_id]"), 10, 64)
	var body map[string]any
	switch do {
	case "create", "update":
		conn, errs := parseConnection(get, do == "update")
		if do == "update" {
			st.editID = id
		}
		if errs != nil {
			c.Status(fiber.StatusBadRequest)
			st.errs, st.msg = errs, "Nothing was saved: correct the fields marked below."
			return p.channelsView(c, st)
		}
		body = map[string]any{"action": do, "connection": conn}
	case "enable", "disable":
		body = map[string]any{"action": "update", "connection": connectionRef(id, map[string]any{"enabled": do == "enable"})}
	case "delete":
		if f.Get("confirm") != "yes" {
			return redirect(c, fmt.Sprintf("%s?delete=%d", channelsPath, id), "")
		}
		body = map[string]any{"action": "delete", "connection": connectionRef(id, nil)}
	case "rotate_token", "test":
		body = map[string]any{"action": do, "connection": connectionRef(id, nil)}
	default:
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be create, update, enable, disable, delete, rotate_token or test"}
	}
	if do != "create" && id < 1 {
		return errNotYours
	}
	if do == "test" {
		return p.testConnection(c, id, body)
	}
	o, err := p.call(c, gateway.InterfaceA, "channel-connection", body)
	if err != nil {
		return err
	}
	if !o.OK {
		if o.HTTP == fiber.StatusNotFound {
			return errNotYours
		}
		c.Status(o.HTTP)
		st.msg, st.errs = o.Message, o.Violations
		if do != "create" && do != "update" {
			st.values, st.errs = nil, nil
		}
		return p.channelsView(c, st)
	}
	switch do {
	case "create", "rotate_token":
		// The inbound URL carries the token, answered this once: shown on this answer only.
		var made chanConnection
		if err := unmarshal(o.Data, &made); err != nil {
			return err
		}
		return p.channelsView(c, connForm{shown: &made})
	}
	ok := map[string]string{"update": "saved", "enable": "enabled", "disable": "disabled", "delete": "deleted"}[do]
	return redirect(c, channelsPath, ok)
}

// mapRow is one property of the mapping screen.
type mapRow struct {
	Code, Name string
	PropertyID string
	Mapping    *chanMapping
	Plans      []mapPlan
	// Problem is the service's refusal to list the property's plans.
	Problem string
	// Values and Errors are the row's form state (a form sent: its own; else the mapping's).
	Values, Errors map[string]string
	Message        string
}

// mapPlan is one plan of a property with its remote id.
type mapPlan struct {
	ID           int64
	Name, Remote string
	Hint         string
}

// mapData is the mapping screen's data.
type mapData struct {
	Tab        string
	Connection chanConnection
	Rows       []mapRow
	Total      int
	Page       int
	Pages      int
	Partial    bool
	// DeleteCode is the property whose mapping's deletion is asked to be confirmed.
	DeleteCode string
	Mapped     int
}

// planHint says which plan a remote id input is for.
func planHint(pl contract.RatePlan) string {
	if pl.ID == contract.StandardPlanID {
		return "the channel manager's rate plan id of the standard plan; empty: not sold there"
	}
	return "the channel manager's rate plan id of this derived plan (" + adjustmentText(pl.Adjustment) + "); empty: not sold there"
}

// mapRows is the number of properties of a page of the mapping screen: each row reads the
// property's plans (one call), counted against the account's rate like an API request.
const mapRows = 25

// mapForm is a mapping form sent (code: its property) and what became of it.
type mapForm struct {
	code         string
	values, errs map[string]string
	msg          string
	deleteCode   string
}

func (p *Panel) mappingPage(c *fiber.Ctx) error {
	return p.mappingView(c, mapForm{deleteCode: strings.Clone(c.Query("delete"))})
}

func connectionID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, errNotYours
	}
	return id, nil
}

// mappingView draws the mapping screen of a connection: a page of the account's properties,
// each with its plans and its mapping.
func (p *Panel) mappingView(c *fiber.Ctx, st mapForm) error {
	id, err := connectionID(c)
	if err != nil {
		return err
	}
	page, _ := strconv.Atoi(c.Query("page"))
	if v := st.values["page"]; v != "" {
		page, _ = strconv.Atoi(v)
	}
	a := askerOf(c)
	var conn chanConnection
	if err := p.mustAs(a, gateway.InterfaceA, "channel-connection", map[string]any{"action": "get", "connection": connectionRef(id, nil)}, &conn); err != nil {
		return err
	}
	maps, err := p.readMappings(a, id)
	if err != nil {
		return err
	}
	props, partial, err := p.allProperties(a)
	if err != nil {
		return err
	}
	byCode := map[string]*chanMapping{}
	byID := map[int64]*chanMapping{}
	for i := range maps {
		byCode[maps[i].InternalCode] = &maps[i]
		byID[int64(maps[i].PropertyID)] = &maps[i]
	}
	d := mapData{Tab: "connections", Connection: conn, Total: len(props), Partial: partial, Mapped: len(maps), DeleteCode: st.deleteCode}
	d.Pages = max((len(props)+mapRows-1)/mapRows, 1)
	// The page of the property a form was sent for.
	if st.code != "" {
		for i := range props {
			if props[i].InternalCode == st.code {
				page = i/mapRows + 1
			}
		}
	}
	d.Page = min(max(page, 1), d.Pages)
	shown := props[min((d.Page-1)*mapRows, len(props)):min(d.Page*mapRows, len(props))]
	d.Rows = make([]mapRow, len(shown))
	each(len(shown), func(i int) {
		pr := shown[i]
		row := mapRow{Code: pr.InternalCode, Name: pr.Name, PropertyID: pr.PropertyID, Mapping: byCode[pr.InternalCode]}
		if row.Mapping == nil {
			if pid, err := strconv.ParseInt(pr.PropertyID, 10, 64); err == nil {
				row.Mapping = byID[pid]
			}
		}
		var plans struct {
			RatePlans []contract.RatePlan `json:"rate_plans"`
		}
		o, err := p.callAs(a, gateway.InterfaceA, "property-rateplan", map[string]any{"action": "list", "internal_code": pr.InternalCode})
		switch {
		case err != nil:
			row.Problem = "its rate plans could not be read; try again"
		case !o.OK:
			row.Problem = o.Message
		default:
			_ = unmarshal(o.Data, &plans)
		}
		slices.SortStableFunc(plans.RatePlans, func(x, y contract.RatePlan) int { return boolInt(x.ID != 0) - boolInt(y.ID != 0) })
		for _, pl := range plans.RatePlans {
			row.Plans = append(row.Plans, mapPlan{ID: pl.ID, Name: pl.Name, Remote: row.Mapping.remote(pl.ID), Hint: planHint(pl)})
		}
		if len(row.Plans) == 0 && row.Problem == "" {
			row.Plans = []mapPlan{{ID: contract.StandardPlanID, Name: "Standard", Remote: row.Mapping.remote(0), Hint: planHint(contract.RatePlan{})}}
		}
		row.Values = map[string]string{}
		if m := row.Mapping; m != nil {
			row.Values["mapping[remote_property_id]"], row.Values["mapping[room_type_id]"] = m.RemotePropertyID, m.RoomTypeID
		}
		for j, pl := range row.Plans {
			row.Values[fmt.Sprintf("mapping[rate_plans][%d][remote_rate_plan_id]", j)] = pl.Remote
		}
		if st.code == row.Code && st.values != nil {
			row.Values, row.Errors, row.Message = st.values, st.errs, st.msg
		}
		d.Rows[i] = row
	})
	if d.DeleteCode != "" && byCode[d.DeleteCode] == nil {
		return errNotYours
	}
	msg := ""
	if st.code == "" {
		msg = st.msg
	}
	v := view{Title: "Mapping · connection " + conn.ID.String() + " (" + conn.Adapter + ")", Session: sessionOf(c), Nav: "channels",
		Notice: notice(c), Message: msg, Data: d}
	return p.render(c, "channelmap", v)
}

// mapping are the row's fields of the mapping screen: the /api/channel-mapping mapping object
// of a save (blank remote plan ids dropped: the plan is not sold there), or the violations
// by field; sent[i] is the form row of the i-th plan sent (to show a violation of
// mapping.rate_plans[i] at its input).
func parseMapping(get func(string) string) (m map[string]any, sent []int, errs map[string]string) {
	errs = map[string]string{}
	m = map[string]any{"remote_property_id": strings.TrimSpace(get("mapping[remote_property_id]")),
		"room_type_id": strings.TrimSpace(get("mapping[room_type_id]"))}
	plans := []map[string]any{}
	for i := range 100 {
		pre := fmt.Sprintf("mapping[rate_plans][%d]", i)
		idS := get(pre + "[rate_plan_id]")
		if idS == "" {
			break
		}
		remote := strings.TrimSpace(get(pre + "[remote_rate_plan_id]"))
		if remote == "" {
			continue
		}
		id, err := strconv.ParseInt(idS, 10, 64)
		if err != nil || id < 0 {
			errs[pre+"[remote_rate_plan_id]"] = "is not of a plan of the property"
			continue
		}
		plans = append(plans, map[string]any{"rate_plan_id": id, "remote_rate_plan_id": remote})
		sent = append(sent, i)
	}
	if m["remote_property_id"] == "" {
		errs["mapping[remote_property_id]"] = "is required"
	}
	if m["room_type_id"] == "" {
		errs["mapping[room_type_id]"] = "is required"
	}
	if len(plans) == 0 {
		errs["mapping[rate_plans]"] = "map at least one rate plan: type the channel manager's id of it"
	}
	m["rate_plans"] = plans
	return m, sent, nilIfEmpty(errs)
}

// mappingAction sends a form of the mapping screen (do: save, enable, disable, delete,
// sync; code: the property; sync_all: a full sync of every enabled mapping).
func (p *Panel) mappingAction(c *fiber.Ctx) error {
	id, err := connectionID(c)
	if err != nil {
		return err
	}
	f := postValues(c)
	do, code := f.Get("do"), strings.TrimSpace(f.Get("internal_code"))
	get := func(k string) string { return f.Get(k) }
	back := fmt.Sprintf("%s/%d", channelsPath, id)
	if pg := f.Get("page"); pg != "" {
		if n, err := strconv.Atoi(pg); err == nil && n > 1 {
			back += "?page=" + strconv.Itoa(n)
		}
	}
	if do == "sync_all" {
		return p.syncAll(c, id)
	}
	if code == "" {
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "internal_code is required"}
	}
	st := mapForm{code: code, values: map[string]string{}}
	for k := range f {
		if k != csrfField {
			st.values[k] = f.Get(k)
		}
	}
	ref := map[string]any{"connection_id": id, "internal_code": code}
	var body map[string]any
	var sent []int
	switch do {
	case "save":
		m, rows, errs := parseMapping(get)
		sent = rows
		if errs != nil {
			c.Status(fiber.StatusBadRequest)
			st.errs, st.msg = errs, "Nothing was saved: correct the fields marked below."
			return p.mappingView(c, st)
		}
		for k, v := range ref {
			m[k] = v
		}
		action := "update"
		if f.Get("mapped") != "1" {
			action = "create"
			m["enabled"] = true
		}
		body = map[string]any{"action": action, "mapping": m}
	case "enable", "disable":
		body = map[string]any{"action": "update", "mapping": map[string]any{"connection_id": id, "internal_code": code, "enabled": do == "enable"}}
	case "delete":
		if f.Get("confirm") != "yes" {
			return redirect(c, back+sepOf(back)+"delete="+url.QueryEscape(code), "")
		}
		body = map[string]any{"action": "delete", "mapping": ref}
	case "sync":
		body = map[string]any{"action": "sync", "mapping": ref}
	default:
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be save, enable, disable, delete, sync or sync_all"}
	}
	o, err := p.callShown(c, "channel-mapping", body)
	if err != nil {
		return err
	}
	if !o.OK {
		if o.HTTP == fiber.StatusNotFound && do != "save" {
			return errNotYours
		}
		c.Status(o.HTTP)
		st.msg, st.errs = o.Message, map[string]string{}
		for k, m := range o.Violations {
			// A violation of the i-th plan sent is shown at its row of the form.
			if rest, ok := strings.CutPrefix(k, "mapping[rate_plans]["); ok {
				if n, tail, ok := strings.Cut(rest, "]"); ok {
					if i, err := strconv.Atoi(n); err == nil && i < len(sent) {
						k = fmt.Sprintf("mapping[rate_plans][%d]%s", sent[i], tail)
						if tail == "" || tail == "[rate_plan_id]" {
							k = fmt.Sprintf("mapping[rate_plans][%d][remote_rate_plan_id]", sent[i])
						}
					}
				}
			}
			st.errs[k] = m
		}
		if do != "save" {
			// The refusal of a button is the page's message, above the rows.
			st = mapForm{msg: o.Message + strings.Join(append([]string{""}, o.Details...), " "), values: map[string]string{"page": f.Get("page")}}
		}
		return p.mappingView(c, st)
	}
	ok := map[string]string{"save": "saved", "enable": "enabled", "disable": "disabled", "delete": "deleted", "sync": "sync"}[do]
	return redirect(c, back, ok)
}

// syncAll asks for a full sync of every enabled mapping of the connection (at most
// callsAtOnce at a time).
func (p *Panel) syncAll(c *fiber.Ctx, id int64) error {
	a := askerOf(c)
	maps, err := p.readMappings(a, id)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var failed []string
	n := 0
	each(len(maps), func(i int) {
		m := maps[i]
		if !m.Enabled {
			return
		}
		o, err := p.callShownAs(a, "channel-mapping", map[string]any{"action": "sync",
			"mapping": map[string]any{"connection_id": id, "internal_code": m.InternalCode}})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			failed = append(failed, m.InternalCode+": try again")
		case !o.OK:
			failed = append(failed, m.InternalCode+": "+o.Message)
		default:
			n++
		}
	})
	slices.Sort(failed)
	if len(failed) > 0 {
		c.Status(fiber.StatusBadGateway)
		return p.mappingView(c, mapForm{msg: fmt.Sprintf("A full sync started for %d properties; refused for %d: %s", n, len(failed), strings.Join(failed, "; "))})
	}
	return redirect(c, fmt.Sprintf("%s/%d", channelsPath, id), "syncall")
}

func sepOf(u string) string {
	if strings.Contains(u, "?") {
		return "&"
	}
	return "?"
}

// testConnection asks the service for one authenticated read of the channel manager and
// shows what it answered, whatever it was: a channel manager's refusal or failure (which the
// service may answer as a 4xx or a 502 naming it) is the test's answer, not the page's
// failure.
func (p *Panel) testConnection(c *fiber.Ctx, id int64, body map[string]any) error {
	o, err := p.callShown(c, "channel-connection", body)
	if err != nil {
		return err
	}
	if o.HTTP == fiber.StatusNotFound {
		return errNotYours
	}
	t := &testAnswer{ID: id, OK: o.OK, Message: o.Message}
	if t.OK {
		var d struct {
			OK      *bool  `json:"ok"`
			Message string `json:"message"`
			Error   string `json:"error"`
			Status  int    `json:"http_status"`
		}
		_ = unmarshal(o.Data, &d)
		if d.OK != nil && !*d.OK {
			t.OK = false
		}
		t.Message = strings.TrimSpace(d.Message + " " + d.Error)
		if d.Status != 0 {
			t.Message = strings.TrimSpace(fmt.Sprintf("%s (HTTP %d)", t.Message, d.Status))
		}
	}
	if !t.OK {
		c.Status(fiber.StatusUnprocessableEntity)
	}
	return p.channelsView(c, connForm{tested: t})
}

// callShown is call for an action whose refusal the page shows whatever its status: a
// service's 503 (a part not running, a channel manager unreachable) is said on the page the
// form came from, in the service's words, rather than as a failure of the panel. An answer
// without the A envelope is still an error.
func (p *Panel) callShown(c *fiber.Ctx, resource string, body any) (outcome, error) {
	return p.callShownAs(askerOf(c), resource, body)
}

func (p *Panel) callShownAs(a asker, resource string, body any) (outcome, error) {
	js, err := json.Marshal(body)
	if err != nil {
		return outcome{}, err
	}
	ans, err := p.cfg.Gateway.Call(a.ctx, a.caller, gateway.InterfaceA, resource, js, a.requestID)
	if err != nil {
		return outcome{}, err
	}
	var env envelope
	if err := json.Unmarshal(ans.Body, &env); err != nil || ans.Status >= 500 && env.ErrorMessage == "" && env.Message == "" {
		return outcome{}, fmt.Errorf("%s answered %d: %.300s", resource, ans.Status, ans.Body)
	}
	o := outcome{HTTP: ans.Status, Data: env.Data, Message: env.ErrorMessage, OK: ans.Status == fiber.StatusOK}
	if o.Message == "" {
		o.Message = env.Message
	}
	for _, v := range env.Errors {
		if o.Violations == nil {
			o.Violations = map[string]string{}
		}
		o.Violations[bracket(v.Field)] = v.Message
		o.Details = append(o.Details, v.Field+": "+v.Message)
	}
	return o, nil
}

// rowField is field for a form repeated on a page (a property's mapping, a conflict's
// resolve form): the row's own values and violations, and an id of the row's own.
func rowField(values, errs map[string]string, row, name, label, kind string, more ...string) Field {
	f := funcs["field"].(func(view, string, string, string, ...string) Field)(view{Values: values, Errors: errs}, name, label, kind, more...)
	f.ID = "f-" + idOf(row) + "-" + idOf(name)
	return f
}

// when writes an answer's RFC 3339 time as "2006-01-02 15:04:05" in UTC ("" as it is).
func when(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(time.DateTime)
}

func init() {
	funcs["rowField"] = rowField
	funcs["when"] = when
}
