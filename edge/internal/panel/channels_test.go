package panel

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/panelauth"
)

// TestParseConnection: the connection form as the /api/channel-connection object, each
// mistake at its field; only the chosen adapter's credentials are sent, an update sends
// the credentials typed only.
func TestParseConnection(t *testing.T) {
	form := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name   string
		get    func(string) string
		update bool
		want   string
		errs   map[string]string
	}{
		{"channex", form("connection[adapter]", "channex", "connection[endpoint]", " https://x.example ", "connection[days]", "30",
			"connection[credentials][api_key]", "k", "connection[credentials][username]", "u"), false,
			`{"adapter":"channex","credentials":{"api_key":"k"},"days":30,"endpoint":"https://x.example"}`, nil},
		{"opentravel", form("connection[adapter]", "opentravel", "connection[endpoint]", "https://x", "connection[channel]", "BookingCom",
			"connection[credentials][username]", "u", "connection[credentials][password]", "p"), false,
			`{"adapter":"opentravel","channel":"BookingCom","credentials":{"password":"p","username":"u"},"endpoint":"https://x"}`, nil},
		{"mistakes", form("connection[adapter]", "siteminder", "connection[days]", "731"), false, "",
			map[string]string{"connection[adapter]": "must be one of channex, opentravel", "connection[days]": "must be a whole number of days from 1 to 730"}},
		{"missing credentials", form("connection[adapter]", "opentravel", "connection[credentials][username]", "u"), false, "",
			map[string]string{"connection[credentials][password]": "is required"}},
		{"update keeps the secrets", form("connection[connection_id]", "3", "connection[adapter]", "channex", "connection[endpoint]", "https://y",
			"connection[days]", "500"), true, `{"connection_id":3,"days":500,"endpoint":"https://y"}`, nil},
		{"update a key", form("connection[connection_id]", "3", "connection[adapter]", "channex", "connection[credentials][api_key]", "new"), true,
			`{"connection_id":3,"credentials":{"api_key":"new"},"endpoint":""}`, nil},
		{"update of nothing", form("connection[adapter]", "channex"), true, "",
			map[string]string{"connection[connection_id]": "must be the id of a connection"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, errs := parseConnection(tc.get, tc.update)
			if !reflect.DeepEqual(errs, tc.errs) {
				t.Fatalf("violations %v, want %v", errs, tc.errs)
			}
			if tc.errs != nil {
				return
			}
			js, _ := json.Marshal(conn)
			if string(js) != tc.want {
				t.Fatalf("sent %s, want %s", js, tc.want)
			}
		})
	}
}

// TestParseMapping: a mapping row as the /api/channel-mapping object; a plan left empty is
// not sent, and sent names the form row of each plan sent.
func TestParseMapping(t *testing.T) {
	f := map[string]string{"mapping[remote_property_id]": " P1 ", "mapping[room_type_id]": "R1",
		"mapping[rate_plans][0][rate_plan_id]": "0", "mapping[rate_plans][0][remote_rate_plan_id]": "BAR",
		"mapping[rate_plans][1][rate_plan_id]": "1", "mapping[rate_plans][1][remote_rate_plan_id]": " ",
		"mapping[rate_plans][2][rate_plan_id]": "2", "mapping[rate_plans][2][remote_rate_plan_id]": "BB"}
	m, sent, errs := parseMapping(func(k string) string { return f[k] })
	js, _ := json.Marshal(m)
	if errs != nil || string(js) != `{"rate_plans":[{"rate_plan_id":0,"remote_rate_plan_id":"BAR"},{"rate_plan_id":2,"remote_rate_plan_id":"BB"}],"remote_property_id":"P1","room_type_id":"R1"}` ||
		fmt.Sprint(sent) != "[0 2]" {
		t.Fatalf("mapping %s, rows %v, violations %v", js, sent, errs)
	}
	_, _, errs = parseMapping(func(k string) string { return map[string]string{"mapping[rate_plans][0][rate_plan_id]": "0"}[k] })
	if len(errs) != 3 || errs["mapping[rate_plans]"] == "" || errs["mapping[room_type_id]"] != "is required" {
		t.Fatalf("an empty row: %v", errs)
	}
}

// TestReadLogQuery: the log's filters, their checks, and the list's log object.
func TestReadLogQuery(t *testing.T) {
	q, err := readLogQuery(func(k string) string {
		return map[string]string{"connection": "2", "property": "17", "kind": "rates", "status": "error", "from": "2027-01-02",
			"to": "2027-01-03", "q": " 429 ", "cursor": "99"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(q.filter(50))
	if string(js) != `{"connection_id":2,"cursor":99,"from":"2027-01-02T00:00:00Z","kind":"rates","limit":50,"property_id":17,"q":"429","status":"error","to":"2027-01-04T00:00:00Z"}` {
		t.Fatalf("filter %s", js)
	}
	if got := q.values().Encode(); got != "connection=2&from=2027-01-02&kind=rates&property=17&q=429&status=error&to=2027-01-03" {
		t.Fatalf("values %s", got)
	}
	for k, v := range map[string]string{"connection": "x", "kind": "rate", "status": "fine", "from": "2027-13-01", "cursor": "-1", "q": strings.Repeat("a", 101)} {
		if _, err := readLogQuery(func(n string) string {
			if n == k {
				return v
			}
			return ""
		}); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
}

// TestChannelPagesDraw renders the four pages: the values the services answered, escaped,
// the forms' values and violations at their fields, the inbound URL shown once.
func TestChannelPagesDraw(t *testing.T) {
	sess := panelauth.Session{Email: "o@example.com", Role: panelauth.Owner, CSRF: "tok"}
	conns := []chanConnection{{ID: 1, Adapter: "channex", Endpoint: "https://e.example/<x>", Channel: "channex", Enabled: true, Days: 500, Mapped: 2, Open: 3},
		{ID: 2, Adapter: "opentravel", Endpoint: "https://o.example", Channel: "bookingcom", Days: 30}}
	html := execute(t, "channels", view{Title: "Channels", Session: sess, Nav: "channels",
		Values: map[string]string{"connection[adapter]": "channex", "connection[endpoint]": "ftp://bad"},
		Errors: map[string]string{"connection[endpoint]": "must be an https URL"},
		Data: channelsData{Tab: "connections", Connections: conns, Adapters: channelAdapters, Shown: &chanConnection{ID: 1, InboundURL: "https://vros.example/channels/channex/tok123"},
			Tested: &testAnswer{ID: 2, Message: "channel manager answered 401: <b>bad key</b>"}, DeleteID: 2, Deleting: &conns[1]}})
	for _, want := range []string{`https://e.example/&lt;x&gt;`, `<td class="mapped"><a href="/panel/channels/1">2</a></td>`, `class="mark">3</a>`,
		`hx-history="false"`, `<code class="secret" id="inbound-url">https://vros.example/channels/channex/tok123</code>`,
		`it failed. channel manager answered 401: &lt;b&gt;bad key&lt;/b&gt;`, `Yes, delete connection 2`, `name="confirm" value="yes"`,
		`<td class="state">disabled</td>`, `Enable<span class="vh"> connection 2</span>`, `must be an https URL`, `value="ftp://bad"`,
		`aria-invalid="true" aria-describedby="f-connection-endpoint-err"`, `aria-current="page">Channels`, `aria-current="page">Connections`,
		`name="connection[credentials][api_key]" type="password" value=""`, `<option value="channex" selected>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the connections page lacks %s", want)
		}
	}

	m := &chanMapping{ConnectionID: 1, PropertyID: 7, InternalCode: "V1", RemotePropertyID: "P-1", RoomTypeID: "R-1", Enabled: true,
		RatePlans: []chanPlan{{RatePlanID: 0, RemoteRatePlanID: "BAR"}}}
	rows := []mapRow{{Code: "V1", Name: "<i>Villa</i>", PropertyID: "7", Mapping: m,
		Plans:  []mapPlan{{ID: 0, Name: "Standard", Remote: "BAR"}, {ID: 1, Name: "Non-refundable"}},
		Values: map[string]string{"mapping[remote_property_id]": "P-1", "mapping[room_type_id]": "R-1", "mapping[rate_plans][0][remote_rate_plan_id]": "BAR"}},
		{Code: "V2", Name: "Two", PropertyID: "8", Plans: []mapPlan{{ID: 0, Name: "Standard"}}, Message: "request has 1 invalid field",
			Values: map[string]string{"mapping[rate_plans][0][remote_rate_plan_id]": "X"},
			Errors: map[string]string{"mapping[rate_plans][0][remote_rate_plan_id]": "is not a rate plan of room type R-2"}}}
	html = execute(t, "channelmap", view{Title: "Mapping", Session: sess, Nav: "channels",
		Data: mapData{Tab: "connections", Connection: conns[0], Rows: rows, Total: 2, Page: 1, Pages: 1, Mapped: 1, DeleteCode: "V1"}})
	for _, want := range []string{`&lt;i&gt;Villa&lt;/i&gt;`, `1 of 2 properties mapped`, `Mapped, enabled`, `Not mapped`,
		`id="f-V1-mapping-remote_property_id" name="mapping[remote_property_id]" type="text" value="P-1"`,
		`name="mapping[rate_plans][1][rate_plan_id]" value="1"`, `id="f-V1-mapping-rate_plans-0-remote_rate_plan_id" name="mapping[rate_plans][0][remote_rate_plan_id]" type="text" value="BAR"`,
		`<label for="f-V1-mapping-rate_plans-1-remote_rate_plan_id">Non-refundable (plan 1)</label>`, `name="mapped" value="1"`,
		`is not a rate plan of room type R-2`, `aria-describedby="f-V2-mapping-rate_plans-0-remote_rate_plan_id-err"`, `request has 1 invalid field`,
		`Disable<span class="vh"> the mapping of V1</span>`, `Full sync<span class="vh"> of V1</span>`, `Yes, delete the mapping of V1`,
		`href="/panel/channels/log?connection=1&amp;property=7"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the mapping page lacks %s", want)
		}
	}
	if strings.Count(html, `name="mapped"`) != 1 {
		t.Error("a property not mapped is sent as an update")
	}

	entries := []chanLogEntry{{ID: 9, ConnectionID: 1, PropertyID: 7, Code: "V1", Direction: "out", Kind: "rates", Status: "error", HTTPStatus: 422,
		Request: body(`"{\"values\":[{\"rate\":\"<script>\"}]}"`), Response: body(`{"errors":{"code":"validation_error"}}`), Error: "rate invalid",
		At: "2027-01-02T03:04:05.123Z", DurationMS: 12.4, From: "2027-01-02", To: "2027-01-09", Truncated: true}}
	q := logQuery{Connection: "1", Kind: "rates"}
	html = execute(t, "channellog", view{Title: "Channel log", Session: sess, Nav: "channels", Values: map[string]string{"q": "x<y"},
		Data: logData{Tab: "log", Q: q, Entries: entries, Connections: conns, Properties: []propertyChoice{{ID: "7", Code: "V1", Name: "Villa"}},
			Kinds: logKinds, Statuses: logStatuses, Next: "/panel/channels/log?connection=1&cursor=9&kind=rates"}})
	for _, want := range []string{`data-log="9" data-kind="rates" data-status="error"`, `2027-01-02 03:04:05`, `<td>V1</td>`, `<td>sent</td>`,
		`2027-01-02 – 2027-01-09`, `12 ms`, `rate invalid`, `(cut at 64 KiB)`,
		`hx-get="/panel/channels/log/9?part=bodies" hx-trigger="toggle once from:closest details"`, `href="/panel/channels/log/9"`, `<option value="1" selected>1 · channex</option>`,
		`<option value="rates" selected>rates</option>`, `value="x&lt;y"`, `href="/panel/channels/log?connection=1&amp;cursor=9&amp;kind=rates"`,
		`aria-current="page">Log`} {
		if !strings.Contains(html, want) {
			t.Errorf("the log page lacks %s", want)
		}
	}
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.pages["channellogentry"].ExecuteTemplate(&b, "bodies", entries[0]); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{&#34;values&#34;:[{&#34;rate&#34;:&#34;&lt;script&gt;&#34;}]}`, `{&#34;errors&#34;:{&#34;code&#34;:&#34;validation_error&#34;}}`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the bodies lack %s: %s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "<script>") {
		t.Error("a body is not escaped")
	}
	html = execute(t, "channellogentry", view{Title: "Entry", Session: sess, Nav: "channels", Data: struct {
		Tab   string
		Entry chanLogEntry
	}{"log", entries[0]}})
	if !strings.Contains(html, `rate invalid`) || !strings.Contains(html, `&#34;validation_error&#34;`) || !strings.Contains(html, `V1`) {
		t.Errorf("the entry page: %s", html)
	}

	cfs := []chanConflict{{ID: 4, ConnectionID: 1, ReservationID: "R-9", RevisionID: "rev-1", Channel: "BookingCom", PropertyID: 7, Code: "V1",
		Checkin: "2027-01-10", Checkout: "2027-01-13", Reason: "nights_taken", Nights: []string{"2027-01-10", "2027-01-11"}, BookingIDs: []num{55},
		Guest: json.RawMessage(`"Ada <Lovelace>"`), Total: "450.00", Currency: "EUR", CreatedAt: "2027-01-01T00:00:00Z",
		Values: map[string]string{"conflict[note]": "called"}, Errors: map[string]string{"conflict[note]": "too long"}},
		{ID: 3, Reason: "unknown_room_type", Guest: json.RawMessage(`{"first_name":"Bo","last_name":"Li"}`), ResolvedAt: "2027-01-02T00:00:00Z", Note: "mapped it"}}
	html = execute(t, "channelconflicts", view{Title: "Channel conflicts", Session: sess, Nav: "channels", Data: conflictsData{Tab: "conflicts", Conflicts: cfs, Open: 1}})
	for _, want := range []string{`data-conflict="4" data-open="yes"`, `nights_taken`, `2027-01-10<br>2027-01-11`, `<a href="/panel/bookings/55">55</a>`,
		`Ada &lt;Lovelace&gt;`, `450.00 EUR`, `id="f-c4-conflict-note" name="conflict[note]" type="text" value="called"`, `too long`,
		`Resolve<span class="vh"> conflict 4</span>`, `data-conflict="3" data-open="no"`, `Bo Li`, `resolved 2027-01-02 00:00:00`, `mapped it`, `1 open.`} {
		if !strings.Contains(html, want) {
			t.Errorf("the conflicts page lacks %s", want)
		}
	}
	if strings.Count(html, "Resolve<span") != 1 {
		t.Error("a resolved conflict offers to resolve it")
	}
}
