package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// storeDoc is one stored document of the stack, as extended JSON.
type storeDoc struct {
	db, coll string
	id       any
	doc      bson.M
	text     string
}

// everyDocument reads every document of every vros database the stack uses.
func everyDocument(t *testing.T) []storeDoc {
	t.Helper()
	ctx := context.Background()
	dbs, err := mongoDB.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var out []storeDoc
	for _, db := range dbs {
		if !strings.HasPrefix(db, "vros_") {
			continue
		}
		colls, err := mongoDB.Database(db).ListCollectionNames(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range colls {
			cur, err := mongoDB.Database(db).Collection(c).Find(ctx, bson.D{})
			if err != nil {
				t.Fatalf("%s.%s: %v", db, c, err)
			}
			var docs []bson.M
			if err := cur.All(ctx, &docs); err != nil {
				t.Fatalf("%s.%s: %v", db, c, err)
			}
			for _, d := range docs {
				b, err := bson.MarshalExtJSON(d, false, false)
				if err != nil {
					t.Fatalf("%s.%s: %v", db, c, err)
				}
				// Binary values (stored answers, files) as the bytes they hold, not base64.
				text := string(b) + binaryText(d)
				out = append(out, storeDoc{db: db, coll: c, id: d["_id"], doc: d, text: text})
			}
		}
	}
	return out
}

// binaryText is every binary value of v, each on a line of its own.
func binaryText(v any) string {
	var sb strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case bson.M:
			for _, vv := range x {
				walk(vv)
			}
		case bson.D:
			for _, e := range x {
				walk(e.Value)
			}
		case bson.A:
			for _, vv := range x {
				walk(vv)
			}
		case bson.Binary:
			sb.WriteString("\n")
			sb.Write(x.Data)
		}
	}
	walk(v)
	return sb.String()
}

// holding lists the stored documents whose text holds any of needles, in any case.
func holding(t *testing.T, needles []string) []string {
	t.Helper()
	var out []string
	for _, d := range everyDocument(t) {
		text := strings.ToLower(d.text)
		for _, n := range needles {
			if strings.Contains(text, strings.ToLower(n)) {
				out = append(out, fmt.Sprintf("%s.%s %v holds %q", d.db, d.coll, d.id, n))
			}
		}
	}
	return out
}

// topicMessages reads every message of topic, every partition from its first offset to its
// end as it is now.
func topicMessages(t *testing.T, topic string) []kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", st.KafkaBrokers[0])
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic)
	_ = conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out []kafka.Message
	for _, p := range parts {
		lc, err := kafka.DialLeader(ctx, "tcp", st.KafkaBrokers[0], topic, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		first, last, err := lc.ReadOffsets()
		_ = lc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if last <= first {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: st.KafkaBrokers, Topic: topic, Partition: p.ID, MaxBytes: 10 << 20, MaxWait: 100 * time.Millisecond})
		if err := r.SetOffset(first); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				_ = r.Close()
				t.Fatalf("%s partition %d: %v", topic, p.ID, err)
			}
			out = append(out, m)
			if m.Offset >= last-1 {
				break
			}
		}
		_ = r.Close()
	}
	return out
}

// latestByKey is the newest message of each key of the vros topics whose key starts with
// prefix, in partition order (one key's messages share a partition).
func latestByKey(t *testing.T, prefix string) map[string]kafka.Message {
	t.Helper()
	out := map[string]kafka.Message{}
	for _, topic := range []string{events.TopicProperty, events.TopicBooking} {
		for _, m := range topicMessages(t, topic) {
			if k := string(m.Key); strings.HasPrefix(k, prefix) {
				if cur, ok := out[k]; !ok || m.Offset > cur.Offset {
					out[k] = m
				}
			}
		}
	}
	return out
}

// inTopics lists the messages of the vros topics whose key or value holds any of needles.
func inTopics(t *testing.T, needles []string) []string {
	t.Helper()
	var out []string
	for _, topic := range []string{events.TopicProperty, events.TopicBooking} {
		for _, m := range topicMessages(t, topic) {
			text := strings.ToLower(string(m.Key) + " " + string(m.Value))
			for _, n := range needles {
				if strings.Contains(text, strings.ToLower(n)) {
					out = append(out, fmt.Sprintf("%s %s@%d holds %q", topic, m.Key, m.Offset, n))
				}
			}
		}
	}
	return out
}

// listed reads one booking through listbooking as acc: its answer, or nil when acc has no
// such booking.
func listed(t *testing.T, acc account, id int64) map[string]any {
	t.Helper()
	r := acc.b(t, "listbooking", obj{"bookingId": id})
	if bStatus(r.Body) != 0 {
		return nil
	}
	var out struct {
		List []map[string]any `json:"listBooking"`
	}
	if err := json.Unmarshal(r.b(t).Data, &out); err != nil {
		t.Fatalf("listbooking: %s: %v", r.Body, err)
	}
	if len(out.List) == 0 {
		return nil
	}
	return out.List[0]
}

// TestGuestErasure: a guest with two bookings (their email in two spellings), a stored card,
// an arrival form, a payment, a guest user and a create retried by Idempotency-Key is erased
// through the admin API. Afterwards no document of any service's database and no message of
// the topics holds their name, email, phone or address; the bookings keep their money, dates,
// status and nights; another guest of the account is untouched; the audit record holds the
// counts only; a second erasure finds nobody.
func TestGuestErasure(t *testing.T) {
	acc := newAccount(t)
	pid := bookable(t, acc, "GE1")
	tag := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	first, last := "Zephyrine", "Quackenbush"+tag
	email := "Zephyrine.Q" + tag + "@Example.org"
	phone, address := "+39 055 01"+tag[:3], "Via Erasmo "+tag
	person := func(in, out string, mail string) obj {
		g := guest(pid, in, out)
		g["firstName"], g["lastName"], g["email"] = first, last, mail
		g["phone1"], g["address"], g["other"] = phone, address, "Arrives late "+tag
		return g
	}
	g1 := person(day(30), day(33), email)
	g1["creditCard"] = obj{"CCNumber": "4242424242424242", "NameOnCard": first + " " + last, "Expiration": "12/2035", "CVC": "123"}
	h := map[string]string{"Idempotency-Key": "guest-erasure-" + tag}
	var b1 bookingData
	for range 2 { // the retry answers the stored answer, which names the guest
		r := do(t, http.MethodPost, "/vros/external-booking", h, acc.BBody("create", g1))
		r.ok(t, &b1)
	}
	b2 := create(t, acc, person(day(40), day(42), strings.ToUpper(email)))
	acc.b(t, "updatearrivalform", obj{"bookingId": b1.BookingID, "arriveBy": "plane", "transportNumber": "AZ610", "expectedTime": "9:30",
		"isCompleted": "True", "detailInformation": []obj{{"name": first, "surname": last, "nationality": "IT"}}}).ok(t, nil)
	acc.b(t, "addbookingpayment", obj{"bookingId": b1.BookingID, "amount": "50.25", "description": "deposit"}).ok(t, nil)
	acc.b(t, "adduser", obj{"email": strings.ToLower(email), "password": "s3cret-erase", "name": first + " " + last}).ok(t, nil)
	keep := guest(pid, day(50), day(51))
	keep["firstName"], keep["lastName"], keep["email"] = "Bartholomew", "Keepsake"+tag, "bart.keep"+tag+"@example.net"
	b3 := create(t, acc, keep)

	needles := []string{last, email, phone, address, "Arrives late " + tag}
	if found := holding(t, needles); len(found) < 4 {
		t.Fatalf("before the erasure the stores hold the guest only %d times: %v", len(found), found)
	}
	before := map[int64]map[string]any{b1.BookingID: listed(t, acc, b1.BookingID), b2.BookingID: listed(t, acc, b2.BookingID)}

	path := "/accounts/" + acc.AccountID + "/guests/erase"
	operator(t, http.MethodPost, path, `{}`).wantViolation(t, "email", "")
	operator(t, http.MethodPost, path, `{"email":"not an email"}`).wantViolation(t, "email", "")
	operator(t, http.MethodPost, "/accounts/99999999/guests/erase", `{"email":"a@example.org"}`).status(t, http.StatusNotFound)
	r := operator(t, http.MethodPost, path, jsonText(obj{"email": strings.ToUpper(email)}))
	r.status(t, http.StatusOK)
	var counts struct {
		Data struct {
			Bookings int `json:"bookings"`
			Users    int `json:"users"`
		} `json:"data"`
	}
	r.decode(t, &counts)
	if counts.Data.Bookings != 2 || counts.Data.Users != 1 {
		t.Fatalf("erasure answered %s, want 2 bookings and 1 user", r.Body)
	}

	if found := holding(t, needles); len(found) != 0 {
		t.Errorf("after the erasure the stores still hold the guest:\n%s", strings.Join(found, "\n"))
	}
	if found := inTopics(t, needles); len(found) != 0 {
		t.Errorf("the topics hold the guest:\n%s", strings.Join(found, "\n"))
	}
	for id, was := range before {
		now := listed(t, acc, id)
		if now == nil {
			t.Fatalf("booking %d is gone", id)
		}
		for _, f := range []string{"bookingId", "status", "propertyId", "checkin", "checkout", "totalRent", "taxTotal", "grandTotal",
			"qtyofnights", "nightlyPriceDetail", "payments", "currency"} {
			if fmt.Sprint(was[f]) != fmt.Sprint(now[f]) {
				t.Errorf("booking %d %s: %v, was %v", id, f, now[f], was[f])
			}
		}
		text := jsonText(now)
		if !strings.Contains(text, "erased@invalid") || !strings.Contains(text, "Erased") {
			t.Errorf("booking %d is not anonymised: %s", id, text)
		}
	}
	// The nights stay booked: the ledger holds them and a create for them is refused.
	if h := held(t, acc, pid, day(30), 3); len(h) != 3 {
		t.Errorf("nights held after the erasure: %v", h)
	}
	acc.b(t, "create", guest(pid, day(31), day(32))).wantStatus(t, 8)
	if kept := jsonText(listed(t, acc, b3.BookingID)); !strings.Contains(kept, "Keepsake"+tag) || !strings.Contains(kept, "bart.keep"+tag) {
		t.Errorf("the other guest changed: %s", kept)
	}
	audit := operator(t, http.MethodGet, "/audit?account="+acc.AccountID, "")
	audit.status(t, http.StatusOK)
	if low := strings.ToLower(string(audit.Body)); strings.Contains(low, strings.ToLower(email)) || strings.Contains(low, strings.ToLower(last)) {
		t.Errorf("the audit log names the guest: %s", audit.Body)
	}
	r = operator(t, http.MethodPost, path, jsonText(obj{"email": email}))
	r.status(t, http.StatusOK)
	r.decode(t, &counts)
	if counts.Data.Bookings != 0 || counts.Data.Users != 0 {
		t.Errorf("a second erasure answered %s", r.Body)
	}
}

// belongsTo reports why a stored document belongs to the account (empty: it does not): an
// id or key "<account>:…" (also inside outbox ids "<aggregate>|…"), an account field holding
// the id, or a stored snapshot naming the account.
func belongsTo(d storeDoc, accountID string) string {
	var why string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		if why != "" {
			return
		}
		k := strings.ToLower(key)
		switch x := v.(type) {
		case bson.M:
			for kk, vv := range x {
				walk(kk, vv)
			}
		case bson.D:
			for _, e := range x {
				walk(e.Key, e.Value)
			}
		case bson.A:
			for _, vv := range x {
				walk(key, vv)
			}
		case string:
			switch {
			case strings.HasPrefix(x, accountID+":"), strings.Contains(x, "|"+accountID+":"):
				why = key + " " + x
			case x == accountID && (k == "_id" || strings.Contains(k, "account")):
				why = key + " " + x
			case strings.Contains(x, `"account_id":"`+accountID+`"`):
				why = key + " holds a snapshot of the account"
			}
		case int32, int64, float64:
			if strings.Contains(k, "account") && fmt.Sprint(x) == accountID {
				why = key + " " + fmt.Sprint(x)
			}
		}
	}
	walk("", d.doc)
	return why
}

// TestAccountErasure: an account with properties (one deleted), settings, a brand, a photo,
// a gateway key, bookings with a card and a payment, a guest user and a block is deleted
// through the admin API while another account works on. Afterwards none of its ids answers
// anything but not-found (admin routes, its old credentials, its property and booking ids
// asked by the other account), no store of any service holds a document of it but what
// docs/erasure.md says survives (the erasure markers, edge's minimal record, the audit
// records with the name blanked, edge's usage counts), the compacted topics' latest value of
// each of its keys is a tombstone (its erasure event apart), and the other account saw no
// failure and keeps everything.
func TestAccountErasure(t *testing.T) {
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "AE1")
	pid2 := createProperty(t, acc, "AE2")
	acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "AE2"}}).status(t, http.StatusOK)
	acc.a(t, "account-settings", obj{"weekend_nights": 3}).status(t, http.StatusOK)
	brandID(t, acc, obj{"name": "Erased Villas", "domains": []string{"erased.example"}, "properties": []string{"AE1"}})
	acc.a(t, "property-method", obj{"internal_code": "AE1", "stripe": obj{"secret_key": "sk_test_ERASED_0001", "public_key": "pk_test_erased"}}).status(t, http.StatusOK)
	photo := photoID(t, acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "AE1", "image": samplePNG(t, 200, 160)}}))
	key := photoKey(t, acc, strconv.Itoa(pid), photo)
	var blk struct {
		Data struct {
			BlockID int `json:"block_id"`
		} `json:"data"`
	}
	r := acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "AE1", "start_date": day(80), "end_date": day(81)}})
	r.status(t, http.StatusOK)
	r.decode(t, &blk)
	g := guest(pid, day(30), day(33))
	g["creditCard"] = obj{"CCNumber": "4242424242424242", "NameOnCard": "Ada Lovelace", "Expiration": "12/2035", "CVC": "123"}
	b1 := create(t, acc, g)
	acc.b(t, "addbookingpayment", obj{"bookingId": b1.BookingID, "amount": "10", "description": "deposit"}).ok(t, nil)
	acc.b(t, "adduser", obj{"email": "erased.user@example.com", "password": "s3cret-gone", "name": "Gone Guest"}).ok(t, nil)
	opid := bookable(t, other, "AE1")
	ob := create(t, other, guest(opid, day(30), day(31)))
	eventually(t, "the catalog serves the account's property", func() bool {
		res := acc.read(t, "property-detail", strconv.Itoa(pid), nil)
		return res.Code == http.StatusOK && !bError(res.Body)
	})
	// The other account's reads below count every failure: its property must be served first
	// (bookable waits for booking-svc only, and the catalog reads another partition).
	eventually(t, "the catalog serves the other account's property", func() bool {
		res := other.read(t, "property-detail", strconv.Itoa(opid), nil)
		return res.Code == http.StatusOK && !bError(res.Body)
	})
	do(t, http.MethodGet, "/media/"+key+"/small.jpg", nil, "").status(t, http.StatusOK)
	uses := credentialUses(acc, "AE1")
	// What the searches below look for is there before the deletion: documents of the
	// account in every service's database, and the photo's files.
	dbs, files := map[string]bool{}, 0
	for _, d := range everyDocument(t) {
		if belongsTo(d, acc.AccountID) != "" {
			dbs[d.db] = true
		}
		if strings.Contains(d.text, key) {
			files++
		}
	}
	if !dbs["vros_edge"] || !dbs["vros_property"] || !dbs["vros_booking"] || !dbs["vros_catalog"] || files < 7 {
		t.Fatalf("before the deletion the account's documents are found only in %v, its photo in %d", dbs, files)
	}

	// The other account works throughout, at a steady pace its plan allows.
	setPlan(t, other, obj{"rate_rps": 1000, "rate_burst": 100000})
	stop := make(chan struct{})
	var failures atomic.Int64
	var calls atomic.Int64
	var failed sync.Map
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			q := other.BBody("getinfo", obj{"propertyId": opid, "numberofadults": 1, "checkin": day(60 + i%30), "checkout": day(61 + i%30)})
			for _, c := range []struct {
				method, path, body string
			}{
				{http.MethodPost, "/vros/external-booking", q},
				{http.MethodPost, "/vros/external-booking", other.BBody("listbooking", obj{"bookingId": ob.BookingID})},
				{http.MethodGet, "/vros/api/property-detail/owner_token/" + other.OwnerToken + "/property/" + strconv.Itoa(opid), ""},
			} {
				res, err := apitestSend(c.method, c.path, nil, c.body)
				calls.Add(1)
				if err != nil || res.Code != http.StatusOK || bStatus(res.Body) > 0 || bError(res.Body) {
					failures.Add(1)
					failed.Store(c.path, fmt.Sprintf("%v %d %s", err, res.Code, res.Body))
				}
			}
		}
	}()

	r = operator(t, http.MethodDelete, "/accounts/"+acc.AccountID, "")
	r.status(t, http.StatusOK)
	var del struct {
		Data struct {
			AccountID string `json:"account_id"`
			Status    string `json:"status"`
		} `json:"data"`
	}
	r.decode(t, &del)
	if del.Data.AccountID != acc.AccountID || del.Data.Status != "deleted" {
		t.Fatalf("DELETE answered %s", r.Body)
	}

	// Its credentials are unknown.
	for kind, use := range uses {
		res := use(t)
		if res.Code != http.StatusUnauthorized && bStatus(res.Body) != 2 {
			t.Errorf("%s after the deletion: HTTP %d %s", kind, res.Code, res.Body)
		}
		if strings.Contains(string(res.Body), "suspended") {
			t.Errorf("%s after the deletion is refused as suspended: %s", kind, res.Body)
		}
	}
	// Every admin route of the id: not found.
	base := "/accounts/" + acc.AccountID
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, base, ""}, {http.MethodGet, base + "/plan", ""}, {http.MethodPost, base + "/plan", `{"rate_rps":5}`},
		{http.MethodGet, base + "/usage", ""}, {http.MethodGet, base + "/export", ""}, {http.MethodPost, base + "/suspend", ""},
		{http.MethodPost, base + "/reinstate", ""}, {http.MethodPost, base + "/rotate", ""},
		{http.MethodPost, base + "/settings", `{"legacy_credentials":false}`},
		{http.MethodPost, base + "/guests/erase", `{"email":"ada@example.com"}`}, {http.MethodDelete, base, ""},
	} {
		if res := operator(t, c.method, c.path, c.body); res.Code != http.StatusNotFound {
			t.Errorf("%s %s after the deletion: HTTP %d %s", c.method, c.path, res.Code, res.Body)
		}
	}
	if res := operator(t, http.MethodGet, "/accounts?q="+acc.AccountID, ""); strings.Contains(string(res.Body), `"account_id":"`+acc.AccountID+`"`) {
		t.Errorf("the deleted account is listed: %s", res.Body)
	}
	// Its ids asked by the other account: not found, as for any other account's.
	other.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": day(70), "checkout": day(71)}).wantStatus(t, 16)
	if res := other.read(t, "property-detail", strconv.Itoa(pid), nil); !bError(res.Body) {
		t.Errorf("the other account reads the erased property %d: %s", pid, res.Body)
	}
	if b1.BookingID != ob.BookingID {
		if b := listed(t, other, b1.BookingID); b != nil {
			t.Errorf("the other account lists the erased booking: %v", b)
		}
	}

	// The stores hold nothing of it but what survives by design, and nothing of its photo's
	// files; the topics' latest value of each of its keys is a tombstone.
	if left := settle(func() []string { return storesLeft(t, acc.AccountID, key) }); len(left) > 0 {
		t.Errorf("the stores still hold the account:\n%s", strings.Join(left, "\n"))
	}
	wantKeys := []string{acc.AccountID + ":" + strconv.Itoa(pid), acc.AccountID + ":" + pid2, acc.AccountID + ":settings",
		acc.AccountID + ":booking:" + strconv.FormatInt(b1.BookingID, 10), acc.AccountID + ":block:" + strconv.Itoa(blk.Data.BlockID)}
	if bad := settle(func() []string { return topicsLeft(t, acc.AccountID, wantKeys) }); len(bad) > 0 {
		t.Errorf("the topics:\n%s", strings.Join(bad, "\n"))
	}
	// The photo is served no more: neither the rendition served (and cached) before the
	// deletion nor one never asked for.
	for _, name := range []string{"small", "banner"} {
		if res := do(t, http.MethodGet, "/media/"+key+"/"+name+".jpg", nil, ""); res.Code != http.StatusNotFound {
			t.Errorf("the erased photo's %s rendition is still served: HTTP %d", name, res.Code)
		}
	}

	close(stop)
	wg.Wait()
	if failures.Load() > 0 {
		failed.Range(func(k, v any) bool { t.Errorf("the other account's %s failed: %s", k, v); return true })
		t.Fatalf("%d of the other account's %d requests failed during the erasure", failures.Load(), calls.Load())
	}
	if calls.Load() < 3 {
		t.Fatalf("the other account sent only %d requests", calls.Load())
	}
	if b := listed(t, other, ob.BookingID); b == nil {
		t.Error("the other account's booking is gone")
	}
	if doc := stored(t, other.AccountID, strconv.Itoa(opid)); doc == nil {
		t.Error("the other account's property is gone")
	}
	// The id is never given again.
	next := newAccount(t)
	if next.AccountID == acc.AccountID {
		t.Fatalf("the erased id %s was given again", acc.AccountID)
	}
}

// settle calls f until it reports nothing, at most viewsWithin (the erasure reaches
// booking-svc and catalog-svc through events), and answers its last report.
func settle(f func() []string) []string {
	deadline := time.Now().Add(viewsWithin)
	for {
		left := f()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// storesLeft lists what the stores hold of an erased account beyond what survives by design
// (docs/erasure.md): the services' erasure markers, edge's minimal record (status deleted, no
// name), the audit records (name blanked) and edge's usage counts; and any document naming
// the account's photo (GridFS chunks name their file, not the account) when photo is set.
func storesLeft(t *testing.T, accountID, photo string) []string {
	t.Helper()
	var left []string
	for _, d := range everyDocument(t) {
		why := belongsTo(d, accountID)
		if why == "" && photo != "" && strings.Contains(d.text, photo) {
			why = "the erased photo " + photo
		}
		switch {
		case why == "":
		case d.coll == "erased_accounts" && fmt.Sprint(d.id) == accountID:
		case d.db == "vros_edge" && d.coll == "accounts" && fmt.Sprint(d.id) == accountID:
			if d.doc["status"] != "deleted" || d.doc["name"] != nil && d.doc["name"] != "" {
				left = append(left, "edge's record is not minimal: "+d.text)
			}
		case d.db == "vros_edge" && d.coll == "usage":
		case d.db == "vros_edge" && d.coll == "audit":
			if strings.Contains(d.text, "Test Owner") {
				left = append(left, "an audit record keeps the account's name: "+d.text)
			}
		default:
			left = append(left, fmt.Sprintf("%s.%s %v (%s)", d.db, d.coll, d.id, why))
		}
	}
	return left
}

// topicsLeft lists how the topics fall short of an erased account's: every key in want
// published, the latest value of each of its keys a tombstone, but its erasure event.
func topicsLeft(t *testing.T, accountID string, want []string) []string {
	t.Helper()
	var bad []string
	latest := latestByKey(t, accountID+":")
	for _, k := range want {
		if _, ok := latest[k]; !ok {
			bad = append(bad, k+" never published")
		}
	}
	if _, ok := latest[events.AccountKey(accountID)]; !ok {
		bad = append(bad, "no erasure event")
	}
	for k, m := range latest {
		switch {
		case k == events.AccountKey(accountID):
			var er contract.AccountErasure
			if e, err := events.Decode(m.Value, &er); err != nil || e.Type() != contract.AccountErased || er.AccountID != accountID {
				bad = append(bad, k+" is not the erasure event: "+string(m.Value))
			}
		case !events.IsTombstone(m):
			bad = append(bad, k+" ends with a value")
		}
	}
	return bad
}

// partitionIDs are the ids of topic's partitions.
func partitionIDs(t *testing.T, topic string) []int {
	t.Helper()
	conn, err := kafka.Dial("tcp", st.KafkaBrokers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	parts, err := conn.ReadPartitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(parts))
	for i, p := range parts {
		ids[i] = p.ID
	}
	slices.Sort(ids) // as the writer balances over them; the broker may list them in any order
	return ids
}

// partitionOf is the partition of topic that key goes to (murmur2, as the services publish).
func partitionOf(t *testing.T, topic, key string) int {
	t.Helper()
	return (&kafka.Murmur2Balancer{}).Balance(kafka.Message{Key: []byte(key)}, partitionIDs(t, topic)...)
}

// TestRebuiltCatalogForgetsErasedAccount: a catalog-svc rebuilt from the topics alone (its
// database dropped, a new consumer group) reads an erased account's old snapshots, its erasure
// event and its tombstones in whatever order the partitions give them (the embedded broker
// never compacts), and ends holding nothing of the account but its marker.
func TestRebuiltCatalogForgetsErasedAccount(t *testing.T) {
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "RCE1")
	b := create(t, acc, guest(pid, day(30), day(33)))
	acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "RCE1", "start_date": day(50), "end_date": day(51)}}).
		status(t, http.StatusOK)
	operator(t, http.MethodDelete, "/accounts/"+acc.AccountID, "").status(t, http.StatusOK)
	want := []string{acc.AccountID + ":" + strconv.Itoa(pid), acc.AccountID + ":booking:" + strconv.FormatInt(b.BookingID, 10)}
	if bad := settle(func() []string { return topicsLeft(t, acc.AccountID, want) }); len(bad) > 0 {
		t.Fatalf("the topics:\n%s", strings.Join(bad, "\n"))
	}

	// Sentinels: the other account's properties and bookings, published after the erasure's
	// messages, on every partition of both topics. Once the rebuilt catalog serves them all, it
	// has read everything before them.
	nProp, nBook := len(partitionIDs(t, events.TopicProperty)), len(partitionIDs(t, events.TopicBooking))
	propParts, bookParts := map[int]bool{}, map[int]bool{}
	var pids []int
	var bookings []int64
	for i := 0; len(propParts) < nProp || len(bookParts) < nBook; i++ {
		if i == 40 {
			t.Fatalf("40 sentinels cover partitions %v and %v only", propParts, bookParts)
		}
		p := bookable(t, other, fmt.Sprintf("RCS%d", i))
		pids = append(pids, p)
		propParts[partitionOf(t, events.TopicProperty, other.AccountID+":"+strconv.Itoa(p))] = true
		ob := create(t, other, guest(p, day(30), day(31)))
		bookings = append(bookings, ob.BookingID)
		bookParts[partitionOf(t, events.TopicBooking, other.AccountID+":booking:"+strconv.FormatInt(ob.BookingID, 10))] = true
	}

	st.StopCatalog()
	if err := mongoDB.Database("vros_catalog").Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := st.StartCatalog(context.Background(), "catalog-erased-rebuild-"+time.Now().Format("150405.000000")); err != nil {
		t.Fatal(err)
	}
	for i, p := range pids {
		comp := other.AccountID + "_" + strconv.Itoa(p)
		var res struct {
			Reservations []struct {
				ID string `json:"id"`
			} `json:"reservations"`
		}
		eventually(t, "the rebuilt catalog serves sentinel "+comp, func() bool {
			return other.try(t, "getreservations", obj{"propertyId": comp}, &res) && len(res.Reservations) == 1 &&
				res.Reservations[0].ID == other.AccountID+"_"+strconv.FormatInt(bookings[i], 10)
		})
	}
	var left []string
	for _, d := range everyDocument(t) {
		if d.db != "vros_catalog" {
			continue
		}
		if why := belongsTo(d, acc.AccountID); why != "" && !(d.coll == "erased_accounts" && fmt.Sprint(d.id) == acc.AccountID) {
			left = append(left, fmt.Sprintf("%s %v (%s)", d.coll, d.id, why))
		}
	}
	if len(left) > 0 {
		t.Errorf("the rebuilt catalog holds the erased account:\n%s", strings.Join(left, "\n"))
	}
	if n, _ := mongoDB.Database("vros_catalog").Collection("erased_accounts").CountDocuments(context.Background(),
		bson.D{{Key: "_id", Value: acc.AccountID}}); n != 1 {
		t.Errorf("the rebuilt catalog has no marker of the erased account")
	}
}

// TestAccountErasureWhileViewsDown: an account deleted while booking-svc and catalog-svc are
// stopped is erased by them once they are back (the erasure event waits on the topic; the
// deletion itself needs only edge and property-svc): nothing gets stuck.
func TestAccountErasureWhileViewsDown(t *testing.T) {
	acc := newAccount(t)
	pid := bookable(t, acc, "EVD1")
	b := create(t, acc, guest(pid, day(30), day(32)))
	comp := acc.AccountID + "_" + strconv.Itoa(pid)
	var res struct {
		Reservations []struct {
			ID string `json:"id"`
		} `json:"reservations"`
	}
	eventually(t, "the catalog holds the booking", func() bool {
		return acc.try(t, "getreservations", obj{"propertyId": comp}, &res) && len(res.Reservations) == 1
	})

	bookingDown, catalogDown := true, true
	st.StopBooking()
	st.StopCatalog()
	restart := func() {
		if bookingDown {
			if err := st.StartBooking(context.Background()); err != nil {
				t.Fatal(err)
			}
			bookingDown = false
		}
		if catalogDown {
			// Its group as the stack started it: it reads on from its committed offsets.
			if err := st.StartCatalog(context.Background(), "catalog-svc"); err != nil {
				t.Fatal(err)
			}
			catalogDown = false
		}
	}
	t.Cleanup(restart) // the next tests need them, whatever happens here

	r := operator(t, http.MethodDelete, "/accounts/"+acc.AccountID, "")
	r.status(t, http.StatusOK)
	acc.a(t, "property", obj{"action": "update", "property": validProperty("EVD1")}).status(t, http.StatusUnauthorized)
	// While they are down their stores still hold the account: nothing erased it yet.
	if left := storesLeft(t, acc.AccountID, ""); len(left) == 0 {
		t.Fatal("booking-svc's and catalog-svc's stores hold nothing of the account while they are down")
	}
	restart()
	if left := settle(func() []string { return storesLeft(t, acc.AccountID, "") }); len(left) > 0 {
		t.Errorf("the stores still hold the account:\n%s", strings.Join(left, "\n"))
	}
	want := []string{acc.AccountID + ":" + strconv.Itoa(pid), acc.AccountID + ":booking:" + strconv.FormatInt(b.BookingID, 10)}
	if bad := settle(func() []string { return topicsLeft(t, acc.AccountID, want) }); len(bad) > 0 {
		t.Errorf("the topics:\n%s", strings.Join(bad, "\n"))
	}
}
