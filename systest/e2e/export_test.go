package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// archive is an export read whole: every entry's bytes by name, in the archive's order.
type archive struct {
	names   []string
	entries map[string][]byte
}

// exportOf downloads acc's export through the admin API.
func exportOf(t *testing.T, acc account) archive {
	t.Helper()
	r := operator(t, http.MethodGet, "/accounts/"+acc.AccountID+"/export", "")
	r.status(t, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/zip") {
		t.Fatalf("Content-Type %q", ct)
	}
	zr, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	a := archive{entries: map[string][]byte{}}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if _, dup := a.entries[f.Name]; dup {
			t.Fatalf("entry %s twice", f.Name)
		}
		a.names = append(a.names, f.Name)
		a.entries[f.Name] = b
	}
	return a
}

// serviceManifest is <service>/manifest.json.
type serviceManifest struct {
	Service   string              `json:"service"`
	AccountID string              `json:"account_id"`
	Records   map[string][]string `json:"records"`
}

// manifestOf reads and checks a service's manifest: its collections' files are JSON arrays
// of as many records as it lists (photos: one image per key), ids sorted.
func (a archive) manifestOf(t *testing.T, service, accountID string) serviceManifest {
	t.Helper()
	var m serviceManifest
	if err := json.Unmarshal(a.entries[service+"/manifest.json"], &m); err != nil {
		t.Fatalf("%s/manifest.json: %v", service, err)
	}
	if m.Service != service || m.AccountID != accountID {
		t.Fatalf("%s/manifest.json names %q %q", service, m.Service, m.AccountID)
	}
	for coll, ids := range m.Records {
		if !slices.IsSorted(ids) {
			t.Errorf("%s %s: ids not sorted: %v", service, coll, ids)
		}
		if coll == "photos" && service == "property-svc" {
			for _, id := range ids {
				if _, ok := a.entries[service+"/photos/"+id+".jpg"]; !ok {
					t.Errorf("photo %s listed but not in the archive", id)
				}
			}
			continue
		}
		if coll == "receipts" && service == "booking-svc" {
			// An owner expense's receipt: one file per id, of its own type.
			for _, id := range ids {
				if !slices.ContainsFunc(a.names, func(n string) bool { return strings.HasPrefix(n, service+"/receipts/"+id+".") }) {
					t.Errorf("receipt %s listed but not in the archive", id)
				}
			}
			continue
		}
		var recs []json.RawMessage
		if err := json.Unmarshal(a.entries[service+"/"+coll+".json"], &recs); err != nil {
			t.Errorf("%s/%s.json is not a JSON array: %v", service, coll, err)
			continue
		}
		if len(recs) != len(ids) {
			t.Errorf("%s/%s.json holds %d records, its manifest lists %d", service, coll, len(recs), len(ids))
		}
	}
	return m
}

// listed reports whether the manifest lists id (or "<account>:…:id") in collection coll, or
// in any collection when coll is empty.
func (m serviceManifest) listed(coll, id string) bool {
	for c, ids := range m.Records {
		if coll != "" && c != coll {
			continue
		}
		for _, x := range ids {
			if x == id || strings.HasSuffix(x, ":"+id) {
				return true
			}
		}
	}
	return false
}

// accountDocs are the documents of a database whose _id starts with "<account>:".
func accountDocs(t *testing.T, db, coll, accountID string) []bson.M {
	t.Helper()
	cur, err := mongoDB.Database(db).Collection(coll).Find(context.Background(),
		bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + accountID + ":"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.M
	if err := cur.All(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// storedSecrets walks docs for the values stored under a key that names a secret (sealed
// gateway keys and cards, hashes of passwords and credentials).
func storedSecrets(docs []bson.M) []string {
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		k := strings.ToLower(key)
		secret := strings.Contains(k, "sealed") || strings.Contains(k, "hash") || strings.Contains(k, "password") || strings.Contains(k, "secret")
		switch x := v.(type) {
		case bson.M:
			for kk, vv := range x {
				walk(kk, vv)
			}
			if secret {
				for _, vv := range x {
					if s, ok := vv.(string); ok && len(s) >= 8 {
						out = append(out, s)
					}
				}
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
			if secret && len(x) >= 8 {
				out = append(out, x)
			}
		case bson.Binary:
			if secret && len(x.Data) >= 8 {
				out = append(out, base64.StdEncoding.EncodeToString(x.Data), hex.EncodeToString(x.Data))
			}
		}
	}
	for _, d := range docs {
		walk("", d)
	}
	return out
}

// credentialSecrets are acc's credentials as given out, with the SHA-256 forms edge stores.
func credentialSecrets(acc account) []string {
	var out []string
	for _, s := range []string{acc.BasicUser, acc.BasicPassword, acc.ServiceKey, acc.ServicePass, acc.Key, acc.Pass, acc.OwnerToken} {
		sum := sha256.Sum256([]byte(s))
		out = append(out, s, hex.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(sum[:]), base64.RawURLEncoding.EncodeToString(sum[:]))
	}
	return out
}

// TestExportRoundTrip: an account with properties, rates, a brand, a photo, a gateway key,
// bookings with guests, a stored card, a payment, a guest user and a block exports as one
// zip: each file parses, the manifests list every record the test made (and every record the
// services store of the account), each photo is a JPEG, and no secret — credential, gateway
// key (plain or sealed), card number, password or hash — appears anywhere in it. Another
// account's records are not in it.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "EX1")
	pid2, _ := strconv.Atoi(createProperty(t, acc, "EX2"))
	opid := bookable(t, other, "EX1")
	const gatewayKey, card = "sk_test_EXPORT_never_exported_0042", "4242424242424242"
	acc.a(t, "property-method", obj{"internal_code": "EX1", "stripe": obj{"secret_key": gatewayKey, "public_key": "pk_test_export"}}).status(t, http.StatusOK)
	brand := brandID(t, acc, obj{"name": "Export Villas", "domains": []string{"export.example"}, "properties": []string{"EX1", "EX2"}})
	photo := photoID(t, acc.a(t, "property-photo", obj{"action": "create", "photo": obj{"internal_code": "EX1", "image": samplePNG(t, 320, 200)}}))
	photoKeyEX := photoKey(t, acc, strconv.Itoa(pid), photo)
	var blk struct {
		Data struct {
			BlockID int `json:"block_id"`
		} `json:"data"`
	}
	r := acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "EX1", "start_date": day(80), "end_date": day(81), "memo": "painting"}})
	r.status(t, http.StatusOK)
	r.decode(t, &blk)
	var user struct {
		UserID int `json:"userId"`
	}
	acc.b(t, "adduser", obj{"email": "export.guest@example.com", "password": "Pa55word-export", "name": "Export Guest"}).ok(t, &user)
	g := guest(pid, day(30), day(33))
	g["userId"] = user.UserID
	g["creditCard"] = obj{"CCNumber": card, "NameOnCard": "Ada Lovelace", "Expiration": "12/2035", "CVC": "123"}
	b1 := create(t, acc, g)
	b2 := create(t, acc, guest(pid, day(40), day(41)))
	var pay struct {
		PaymentID string `json:"paymentId"`
	}
	acc.b(t, "addbookingpayment", obj{"bookingId": b1.BookingID, "amount": "50.25", "description": "deposit"}).ok(t, &pay)
	create(t, other, guest(opid, day(30), day(31)))

	a := exportOf(t, acc)
	// Every entry parses.
	for _, name := range a.names {
		switch path.Ext(name) {
		case ".json":
			if !json.Valid(a.entries[name]) {
				t.Errorf("%s is not JSON", name)
			}
		case ".jpg":
			if _, err := jpeg.DecodeConfig(bytes.NewReader(a.entries[name])); err != nil {
				t.Errorf("%s is not a JPEG: %v", name, err)
			}
		default:
			t.Errorf("unexpected entry %s", name)
		}
	}
	for _, must := range []string{"manifest.json", "edge/account.json", "edge/audit.json", "property-svc/manifest.json", "booking-svc/manifest.json"} {
		if _, ok := a.entries[must]; !ok {
			t.Fatalf("no %s in %v", must, a.names)
		}
	}
	// Every collection's list is a list, an empty one too (never null).
	var top struct {
		Records map[string]json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(a.entries["manifest.json"], &top); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	for coll, ids := range top.Records {
		if !bytes.HasPrefix(ids, []byte("[")) {
			t.Errorf("manifest.json records %s: %s, want a list", coll, ids)
		}
	}
	ps := a.manifestOf(t, "property-svc", acc.AccountID)
	bs := a.manifestOf(t, "booking-svc", acc.AccountID)
	for _, c := range []struct {
		what string
		m    serviceManifest
		coll string
		id   string
	}{
		{"property EX1", ps, "properties", strconv.Itoa(pid)},
		{"property EX2", ps, "properties", strconv.Itoa(pid2)},
		{"brand", ps, "", strconv.Itoa(brand)},
		{"photo", ps, "photos", photoKeyEX},
		{"booking 1", bs, "bookings", strconv.FormatInt(b1.BookingID, 10)},
		{"booking 2", bs, "bookings", strconv.FormatInt(b2.BookingID, 10)},
		{"block", bs, "blocks", strconv.Itoa(blk.Data.BlockID)},
		{"payment", bs, "", pay.PaymentID},
		{"guest user", bs, "users", strconv.Itoa(user.UserID)},
	} {
		if !c.m.listed(c.coll, c.id) {
			t.Errorf("%s %s is not listed in %s %q: %v", c.what, c.id, c.m.Service, c.coll, c.m.Records)
		}
	}
	// The photo's image is the original rendition property-svc serves.
	if img, ok := a.entries["property-svc/photos/"+photoKeyEX+".jpg"]; !ok {
		t.Errorf("the photo's image is not in the archive")
	} else if orig := do(t, http.MethodGet, "/media/"+photoKeyEX+"/original.jpg", nil, ""); !bytes.Equal(img, orig.Body) {
		t.Errorf("the exported image (%d bytes) is not the original rendition (%d bytes)", len(img), len(orig.Body))
	}
	// Round trip: every property and booking the services store of the account is listed.
	for _, d := range accountDocs(t, "vros_property", "properties", acc.AccountID) {
		if id := fmt.Sprint(d["_id"]); !ps.listed("properties", id[strings.LastIndex(id, ":")+1:]) {
			t.Errorf("stored property %s is not exported", id)
		}
	}
	for _, d := range accountDocs(t, "vros_booking", "bookings", acc.AccountID) {
		if id := fmt.Sprint(d["_id"]); !bs.listed("bookings", id[strings.LastIndex(id, ":")+1:]) {
			t.Errorf("stored booking %s is not exported", id)
		}
	}
	// The archive's manifest lists every service record under "<service>/<collection>".
	var root struct {
		AccountID string              `json:"account_id"`
		Records   map[string][]string `json:"records"`
	}
	if err := json.Unmarshal(a.entries["manifest.json"], &root); err != nil || root.AccountID != acc.AccountID {
		t.Fatalf("manifest.json: %v %s", err, a.entries["manifest.json"])
	}
	for svc, m := range map[string]serviceManifest{"property-svc": ps, "booking-svc": bs} {
		for coll, ids := range m.Records {
			if got := root.Records[svc+"/"+coll]; !slices.Equal(got, ids) {
				t.Errorf("manifest.json %s/%s lists %v, the service's manifest %v", svc, coll, got, ids)
			}
		}
	}

	// No secret anywhere in the archive.
	secrets := append(credentialSecrets(acc), gatewayKey, card, "4242 4242 4242 4242", "Pa55word-export")
	for _, db := range []string{"vros_property", "vros_booking"} {
		names, err := mongoDB.Database(db).ListCollectionNames(context.Background(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			secrets = append(secrets, storedSecrets(accountDocs(t, db, n, acc.AccountID))...)
		}
	}
	if len(secrets) < 7*4+4+2 { // the sealed gateway key and card, the password hash
		t.Fatalf("only %d secrets to look for: the stored ones were not found", len(secrets))
	}
	for name, b := range a.entries {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a secret (%.12s…)", name, s)
			}
		}
	}
	// Only the account's own records: the other account's id names nothing in the archive.
	for name, b := range a.entries {
		if strings.HasSuffix(name, ".json") && (bytes.Contains(b, []byte(`"`+other.AccountID+`:`)) ||
			bytes.Contains(b, []byte(`"account_id":"`+other.AccountID+`"`))) {
			t.Errorf("%s names a record of the other account", name)
		}
	}
	// An unknown account has no export.
	operator(t, http.MethodGet, "/accounts/99999999/export", "").status(t, http.StatusNotFound)
}
