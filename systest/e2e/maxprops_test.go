package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/testkit/together"
)

// liveProperties counts the account's properties property-svc stores as not deleted.
func liveProperties(t *testing.T, acc account) int64 {
	t.Helper()
	n, err := mongoDB.Database("vros_property").Collection("properties").CountDocuments(context.Background(), bson.D{
		{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + acc.AccountID + ":"}}},
		{Key: "deleted", Value: bson.D{{Key: "$ne", Value: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// setPlan sets fields of acc's plan through the admin API.
func setPlan(t *testing.T, acc account, plan obj) {
	t.Helper()
	operator(t, http.MethodPost, "/accounts/"+acc.AccountID+"/plan", jsonText(plan)).status(t, http.StatusOK)
}

// wantPlanLimit asserts that r refuses a property create for the plan's limit of max,
// in interface A's envelope, saying so.
func wantPlanLimit(t *testing.T, r response, max int) {
	t.Helper()
	if r.Code < 400 || r.Code >= 500 {
		t.Fatalf("create beyond the plan: HTTP %d %s", r.Code, r.Body)
	}
	e := r.aError(t)
	text := e.ErrorMessage
	for _, v := range e.Errors {
		text += " " + v.Field + ": " + v.Message
	}
	if !strings.Contains(text, fmt.Sprintf("at most %d properties", max)) {
		t.Fatalf("the refusal does not name the plan's limit of %d: %s", max, r.Body)
	}
}

// TestMaxProperties: an account whose plan allows 3 properties gets 3 and no more (the
// refusal names the limit and creates nothing), also when 10 creates race; deleting one
// frees a slot; an account without the limit is not affected; lifting it lets creates in.
func TestMaxProperties(t *testing.T) {
	t.Parallel()
	limited, free := newAccount(t), newAccount(t)
	setPlan(t, limited, obj{"max_properties": 3})
	for i := 1; i <= 3; i++ {
		createProperty(t, limited, fmt.Sprintf("MP%d", i))
	}
	wantPlanLimit(t, limited.a(t, "property", obj{"action": "create", "property": validProperty("MP4")}), 3)
	if n := liveProperties(t, limited); n != 3 {
		t.Fatalf("%d properties after a refused create, want 3", n)
	}
	// An update of an existing property is no create: the limit does not apply.
	limited.a(t, "property", obj{"action": "update", "property": validProperty("MP2")}).status(t, http.StatusOK)

	limited.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "MP2"}}).status(t, http.StatusOK)
	createProperty(t, limited, "MP5")
	wantPlanLimit(t, limited.a(t, "property", obj{"action": "create", "property": validProperty("MP6")}), 3)

	for i := 1; i <= 5; i++ { // no plan limit: as before
		createProperty(t, free, fmt.Sprintf("MP%d", i))
	}

	setPlan(t, limited, obj{"max_properties": 0}) // 0: no limit
	createProperty(t, limited, "MP6")
	if n := liveProperties(t, limited); n != 4 {
		t.Fatalf("%d properties once the limit is lifted, want 4", n)
	}
}

// TestMaxPropertiesRace: 10 creates at once against a limit of 3 end with exactly 3
// properties; the 7 others are refused naming the limit.
func TestMaxPropertiesRace(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	setPlan(t, acc, obj{"max_properties": 3})
	var created, refused int
	answers := make([]response, 10)
	together.Run(10, func(i int) {
		answers[i] = sendAResponse(acc, "property", obj{"action": "create", "property": validProperty(fmt.Sprintf("MR%d", i))})
	})
	for _, r := range answers {
		switch {
		case r.Code == http.StatusOK:
			created++
		default:
			wantPlanLimit(t, r, 3)
			refused++
		}
	}
	if created != 3 || refused != 7 {
		t.Fatalf("%d created, %d refused; want 3 and 7", created, refused)
	}
	if n := liveProperties(t, acc); n != 3 {
		t.Fatalf("%d properties stored, want 3", n)
	}
}

// sendAResponse sends an interface A request from any goroutine (no testing.T calls).
func sendAResponse(acc account, resource string, body obj) response {
	r, err := apitestSend(http.MethodPost, "/api/"+resource, acc.AHeaders(), jsonText(body))
	if err != nil {
		return response{Code: 0, Body: []byte(err.Error())}
	}
	return r
}
