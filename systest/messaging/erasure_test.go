package messaging

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/testkit/eventually"
)

// TestAccountErasureForgetsMessaging: an account deleted by the operator leaves nothing in
// messaging-svc's store but its erased_accounts marker — no message of its log, template,
// settings (its sealed SMTP password), suppression, booking snapshot, view or claim — and
// its later events plan nothing (docs/erasure.md, docs/messaging.md). systest/e2e runs
// without messaging-svc, so this is where its part of an erasure is proved end to end.
func TestAccountErasureForgetsMessaging(t *testing.T) {
	acc := newAccount(t, "Erased Stays", nil)
	acc.a(t, "messaging-settings", obj{"action": "update", "from_name": "Erased Stays", "from_address": "bookings@erased.example",
		"notify": []string{"owner@erased.example"}}).ok(t)
	acc.a(t, "message-template", obj{"action": "create", "template": obj{"trigger": "booking.confirmed", "language": "en",
		"subject": "Booked, {{.Guest.FirstName}}", "html": "<p>See you, {{.Guest.FirstName}}.</p>"}}).ok(t)
	p := acc.newProperty(t, "ERASE", "Europe/Rome")
	g := acc.guest("Grace", "Hopper")
	b := acc.book(t, stay(p, g, day(50), day(52)))
	waitMail(t, "the confirmation", messageID(acc.natural("booking.confirmed", b, "once")))

	r := send(t, http.MethodDelete, st.EdgeURL+"/admin/v1/accounts/"+acc.AccountID,
		map[string]string{"Authorization": "Bearer " + adminToken}, "", "the account's deletion")
	if r.Code != http.StatusOK {
		t.Fatalf("DELETE answered HTTP %d %s", r.Code, r.Body)
	}
	var left []string
	defer func() {
		if len(left) > 0 {
			t.Logf("vros_messaging still holds the account: %v", left)
		}
	}()
	eventually.Holds(t, "messaging-svc's store forgets the account", time.Minute, func() bool {
		left = messagingDocsOf(t, acc.AccountID)
		return len(left) == 0
	})
	marks, err := mongoDB.Database("vros_messaging").Collection("erased_accounts").
		CountDocuments(context.Background(), bson.D{{Key: "_id", Value: acc.AccountID}})
	if err != nil || marks != 1 {
		t.Errorf("erased_accounts holds %d markers of the account (%v), want 1", marks, err)
	}
}

// messagingDocsOf lists vros_messaging's documents of the account (by its "account" field or
// an id that is, or starts with, the account's), but its erased_accounts marker.
func messagingDocsOf(t *testing.T, account string) []string {
	t.Helper()
	ctx := context.Background()
	db := mongoDB.Database("vros_messaging")
	colls, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	q := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "account", Value: account}},
		bson.D{{Key: "_id", Value: account}},
		bson.D{{Key: "_id", Value: bson.Regex{Pattern: "^" + account + ":"}}},
	}}}
	var left []string
	for _, c := range colls {
		if c == "erased_accounts" {
			continue
		}
		cur, err := db.Collection(c).Find(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.M
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			left = append(left, fmt.Sprintf("%s %v", c, d["_id"]))
		}
	}
	return left
}
